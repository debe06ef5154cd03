// SPDX-License-Identifier: MIT
//
// The browser half of dashboard_test.py: headless Chromium (driven by
// puppeteer-core, its path given) against a pinwheel-netem --api that
// already has proxy PROXY with a latency toxic of LATENCY ms downstream
// and traffic passing:
//
//   node dashboard_browser.js --module DIR --chromium BIN --port P \
//        --proxy NAME --latency MS --profile DIR [--screenshot FILE.png]
//
// Checks, each printed PASS or FAIL:
//   - GET /dashboard loads (200, text/html) at http://127.0.0.1:P;
//   - the proxy's row appears; its downstream "added delay (last s)" is
//     within [LATENCY - 1, LATENCY + SLACK] ms (the toxic never releases
//     early: no reading below; SLACK is what a loaded machine, ctest -j
//     under ASan, may add: the readings of up to 5 s are looked at for one
//     within)
//     and its configured latency is LATENCY; its upstream delay, if any,
//     is below the downstream one (no toxic that way: the directions are
//     not mixed up);
//   - its bytes counter moves between two refreshes and the rate shown is
//     above 0;
//   - the page made no request outside its origin, and only GETs of
//     /dashboard and /dashboard/data;
//   - from the page's origin, the guard refuses a POST /proxies (403,
//     toxiproxy's "User agent not allowed"), a POST /dashboard/data and a
//     GET /proxies (the API's reads stay closed to browsers);
//   - the same page through another Host name (evil.test, mapped to
//     127.0.0.1 in Chromium's resolver: what DNS rebinding does) is
//     refused, the page and its data (403, the Host named).
// Exit: 0 when all passed, 1 otherwise.
"use strict";

const args = {};
for (let i = 2; i + 1 < process.argv.length; i += 2)
  args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const puppeteer = require(args.module);
const LAT = Number(args.latency);
const SLACK = 150;
const base = `http://127.0.0.1:${args.port}`;
let failed = 0;

function result(ok, what) {
  console.log(`${ok ? "PASS" : "FAIL"}: ${what}`);
  if (!ok) failed++;
}

// The cells of the proxy's row for @dir: {rate, bytes, delay, latency, check} from data-value.
async function row(page, dir) {
  return page.evaluate((name, dir) => {
    const tr = document.querySelector(`tr[data-proxy="${CSS.escape(name)}"][data-dir="${dir}"]`);
    if (!tr) return null;
    const v = (c) => {
      const td = tr.querySelector("td." + c);
      return td && td.dataset.value !== "" ? td.dataset.value : null;
    };
    return { rate: v("rate"), bytes: v("bytes"), delay: v("delay"), latency: v("latency"),
             check: v("check"), drops: v("drops") };
  }, args.proxy, dir);
}

async function poll(fn, done, ms) {
  const end = Date.now() + ms;
  let v;
  for (;;) {
    v = await fn();
    if (done(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

// fetch() from inside the page: the status and the body's start.
async function fromPage(page, method, path, body) {
  return page.evaluate(async (method, path, body) => {
    try {
      const r = await fetch(path, { method, body, headers: body ? { "Content-Type": "text/plain" } : {} });
      return { status: r.status, text: (await r.text()).slice(0, 200) };
    } catch (e) {
      return { status: 0, text: String(e) };
    }
  }, method, path, body || null);
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: args.chromium,
    headless: true,
    userDataDir: args.profile,
    args: ["--no-sandbox", "--disable-background-networking", "--no-first-run",
           "--no-proxy-server", "--disable-gpu", "--disable-dev-shm-usage",
           "--host-resolver-rules=MAP evil.test 127.0.0.1"],
  });
  try {
    const page = await browser.newPage();
    const seen = [];
    page.on("request", (r) => seen.push(`${r.method()} ${r.url()}`));
    const resp = await page.goto(`${base}/dashboard`, { waitUntil: "load", timeout: 10000 });
    result(resp.status() === 200 && /^text\/html/.test(resp.headers()["content-type"] || ""),
           `GET /dashboard: ${resp.status()} ${resp.headers()["content-type"]}`);
    const sel = `tr[data-proxy="${args.proxy}"][data-dir="downstream"] td.delay:not([data-value=""])`;
    await page.waitForSelector(sel, { timeout: 8000 }).catch(() => {});
    let low = null;
    const d1 = await poll(() => row(page, "downstream"), (r) => {
      if (!r || r.delay === null) return false;
      if (Number(r.delay) < LAT - 1) low = r.delay;
      return low !== null || Number(r.delay) <= LAT + SLACK;
    }, 5000);
    result(d1 !== null, `the proxy's row: ${JSON.stringify(d1)}`);
    result(low === null, `no delay shown below the toxic's: ${low === null ? "none" : low} ms`);
    if (d1) {
      const delay = Number(d1.delay);
      result(Number(d1.latency) === LAT, `configured latency shown ${d1.latency} ms (toxic ${LAT})`);
      result(d1.delay !== null && delay >= LAT - 1 && delay <= LAT + SLACK,
             `downstream added delay shown ${d1.delay} ms, within [${LAT - 1}, ${LAT + SLACK}]`);
      const u = await row(page, "upstream");
      result(u && (u.delay === null || Number(u.delay) < delay),
             `upstream added delay shown ${u && u.delay} ms, below the downstream's (no toxic)`);
      const d2 = await poll(() => row(page, "downstream"),
                            (r) => r && Number(r.bytes) > Number(d1.bytes), 4000);
      result(d2 && Number(d2.bytes) > Number(d1.bytes),
             `downstream bytes counter moved: ${d1.bytes} -> ${d2 && d2.bytes}`);
      result(d2 && Number(d2.rate) > 0, `downstream rate shown ${d2 && d2.rate} bytes/s`);
      console.log(`shown: ${JSON.stringify(d2)}`);
      if (args.screenshot) {
        await page.setViewport({ width: 1000, height: 300 });
        await new Promise((r) => setTimeout(r, 2500)); /* a few points on the chart */
        await page.screenshot({ path: args.screenshot, fullPage: true });
      }
    }
    const mine = seen.filter((s) => !/^GET http:\/\/127\.0\.0\.1:\d+\/dashboard(\/data)?$/.test(s));
    result(mine.length === 0 && seen.length > 1,
           `the page's requests: ${seen.length}, all GETs of its own two paths` +
           (mine.length ? `; others: ${mine.slice(0, 5).join(", ")}` : ""));

    const body = JSON.stringify({ name: "evil", listen: "127.0.0.1:0", upstream: "127.0.0.1:9" });
    const post = await fromPage(page, "POST", "/proxies", body);
    result(post.status === 403 && /User agent not allowed/.test(post.text),
           `POST /proxies from the page: ${post.status} ${post.text.trim()}`);
    const post2 = await fromPage(page, "POST", "/dashboard/data", "{}");
    result(post2.status === 403, `POST /dashboard/data from the page: ${post2.status}`);
    const get = await fromPage(page, "GET", "/proxies");
    result(get.status === 403, `GET /proxies from the page: ${get.status} (reads outside the dashboard)`);

    const evil = await browser.newPage();
    const er = await evil.goto(`http://evil.test:${args.port}/dashboard`, { timeout: 10000 });
    const etext = await er.text();
    result(er.status() === 403 && /evil\.test/.test(etext),
           `GET /dashboard with Host evil.test: ${er.status()} ${etext.trim().slice(0, 80)}`);
    const edata = await fromPage(evil, "GET", "/dashboard/data");
    result(edata.status === 403, `GET /dashboard/data with Host evil.test: ${edata.status}`);
  } catch (e) {
    result(false, `browser: ${e.stack || e}`);
  } finally {
    await browser.close();
  }
  process.exit(failed ? 1 : 0);
})();
