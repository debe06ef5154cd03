// SPDX-License-Identifier: MIT
//
// The browser half of dashboard_test.py: headless Chromium (driven by
// puppeteer-core, its path given) against a pinwheel-netem --api with no
// proxy yet, TOKEN its token (read by the test from the page), and a
// client waiting to pass traffic through LISTEN:
//
//   node dashboard_browser.js --module DIR --chromium BIN --port P \
//        --proxy NAME --listen ADDR --upstream ADDR --latency MS \
//        --changed MS --token TOKEN --profile DIR [--screenshot FILE.png]
//
// Checks, each printed PASS or FAIL:
//   - GET / loads (200, text/html) at http://127.0.0.1:P, its meta tag
//     holding TOKEN;
//   - from the page's forms (typed in, buttons clicked): proxy NAME
//     (LISTEN to UPSTREAM) is created, then its latency toxic of LATENCY
//     ms downstream; both show on the page;
//   - the proxy's row: its downstream "added delay (last s)" is within
//     [LATENCY - 1, LATENCY + SLACK] ms (the toxic never releases early:
//     no reading below; SLACK is what a loaded machine, ctest -j under
//     ASan, may add: the readings of up to 5 s are looked at for one
//     within) and its configured latency is LATENCY; its upstream delay,
//     if any, is below the downstream one (the directions not mixed up);
//   - its bytes counter moves between two refreshes, the rate above 0;
//   - the toxic's latency changed from its row to CHANGED shows as
//     configured; a second proxy added, disabled (shown so), enabled and
//     removed (its card gone) by the page's functions its buttons call;
//   - every request the page made went to its own origin, and each one
//     but the page's own load carried X-Pinwheel-Token = TOKEN and no
//     Cookie; the browser holds no cookie for the origin;
//   - from the page's origin, without the token or with a wrong one, the
//     guard refuses POST /proxies (403, toxiproxy's "User agent not
//     allowed") and GET /dashboard/data, GET /proxies (reads too);
//   - the same page through another Host name (evil.test, mapped to
//     127.0.0.1 in Chromium's resolver: what DNS rebinding does) is
//     refused (403, the Host named), and so is its data with TOKEN.
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

// fetch() from inside the page (with @token in X-Pinwheel-Token, if
// given): the status and the body's start.
async function fromPage(page, method, path, body, token) {
  return page.evaluate(async (method, path, body, token) => {
    try {
      const headers = body ? { "Content-Type": "text/plain" } : {};
      if (token !== null) headers["X-Pinwheel-Token"] = token;
      const r = await fetch(path, { method, body, headers });
      return { status: r.status, text: (await r.text()).slice(0, 200) };
    } catch (e) {
      return { status: 0, text: String(e) };
    }
  }, method, path, body || null, token === undefined ? null : token);
}

// Type @values into form @form's fields (by name) and submit it.
async function fillAndSubmit(page, form, values) {
  for (const [k, v] of Object.entries(values)) {
    const sel = `${form} [name="${k}"]`;
    if (await page.$eval(sel, (e) => e.tagName) === "SELECT") {
      await page.select(sel, v);
    } else {
      await page.$eval(sel, (e) => { e.value = ""; });
      await page.type(sel, v);
    }
  }
  await page.click(`${form} button[type="submit"]`);
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
    page.on("request", (r) => seen.push({ what: `${r.method()} ${r.url()}`, h: r.headers() }));
    const resp = await page.goto(`${base}/`, { waitUntil: "load", timeout: 10000 });
    result(resp.status() === 200 && /^text\/html/.test(resp.headers()["content-type"] || ""),
           `GET /: ${resp.status()} ${resp.headers()["content-type"]}`);
    const tok = await page.$eval('meta[name="pinwheel-token"]', (m) => m.content);
    result(tok === args.token, `the page's token is the process's: ${tok === args.token}`);

    await fillAndSubmit(page, "#add-proxy",
                        { name: args.proxy, listen: args.listen, upstream: args.upstream });
    const card = `section[data-proxy="${args.proxy}"]`;
    const made = await page.waitForSelector(`${card} form.add-toxic`, { timeout: 5000 })
      .then(() => true, () => false);
    result(made, `proxy ${args.proxy} created from the page's form (${args.listen} -> ${args.upstream})`);
    await fillAndSubmit(page, `${card} form.add-toxic`,
                        { name: "lat", type: "latency", stream: "downstream",
                          attributes: JSON.stringify({ latency: LAT, jitter: 0 }) });
    const tmade = await page.waitForSelector(`${card} .toxic[data-toxic="lat"]`, { timeout: 5000 })
      .then(() => true, () => false);
    result(tmade, "toxic lat (latency, downstream) created from the page's form");
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
    // the toxic changed from its row; a second proxy through the page's functions
    const changed = Number(args.changed);
    await page.$eval(`${card} .toxic[data-toxic="lat"] input.attrs`,
                     (e, v) => { e.value = v; }, JSON.stringify({ latency: changed, jitter: 0 }));
    await page.click(`${card} .toxic[data-toxic="lat"] button.save-toxic`);
    const c1 = await poll(() => row(page, "downstream"),
                          (r) => r && Number(r.latency) === changed, 4000);
    result(c1 && Number(c1.latency) === changed,
           `toxic changed from its row: configured ${c1 && c1.latency} ms, want ${changed}`);
    const spare = await page.evaluate(async (up) => {
      const shown = () => {
        const s = document.querySelector('section[data-proxy="spare"]');
        return s ? (s.querySelector(".off") ? "disabled" : "enabled") : "gone";
      };
      const out = [];
      await addProxy("spare", "127.0.0.1:0", up); out.push(shown());
      await setProxyEnabled("spare", false); out.push(shown());
      await setProxyEnabled("spare", true); out.push(shown());
      await removeProxy("spare"); out.push(shown());
      return out.join(",");
    }, args.upstream).catch((e) => String(e));
    result(spare === "enabled,disabled,enabled,gone",
           `a second proxy added, disabled, enabled, removed: ${spare}`);

    const origin = new RegExp(`^[A-Z]+ http://127\\.0\\.0\\.1:${args.port}/`);
    const away = seen.filter((r) => !origin.test(r.what));
    const calls = seen.slice(1);
    const bad = calls.filter((r) => r.h["x-pinwheel-token"] !== args.token || r.h.cookie);
    const posts = calls.filter((r) => /^(POST|DELETE) /.test(r.what)).length;
    result(away.length === 0 && bad.length === 0 && calls.length > 3 && posts >= 6,
           `the page's requests: ${seen.length} (${posts} POST/DELETE), all to its origin, ` +
           "each call with the token, none with a cookie" +
           (away.length ? `; elsewhere: ${away.slice(0, 3).map((r) => r.what).join(", ")}` : "") +
           (bad.length ? `; without: ${bad.slice(0, 3).map((r) => r.what).join(", ")}` : ""));
    const cookies = await page.cookies();
    const dc = await page.evaluate(() => document.cookie);
    result(cookies.length === 0 && dc === "", `cookies held: ${cookies.length}, document.cookie "${dc}"`);

    const body = JSON.stringify({ name: "evil", listen: "127.0.0.1:0", upstream: "127.0.0.1:9" });
    const wrong = args.token.replace(/^./, (c) => (c === "0" ? "1" : "0"));
    for (const [what, t] of [["no token", undefined], ["a wrong token", wrong],
                             ["the token cut short", args.token.slice(0, -1)]]) {
      const post = await fromPage(page, "POST", "/proxies", body, t);
      const data = await fromPage(page, "GET", "/dashboard/data", null, t);
      const get = await fromPage(page, "GET", "/proxies", null, t);
      result(post.status === 403 && /User agent not allowed/.test(post.text) &&
             data.status === 403 && get.status === 403,
             `from the page with ${what}: POST /proxies ${post.status}, ` +
             `GET /dashboard/data ${data.status}, GET /proxies ${get.status}`);
    }

    const evil = await browser.newPage();
    const er = await evil.goto(`http://evil.test:${args.port}/`, { timeout: 10000 });
    const etext = await er.text();
    result(er.status() === 403 && /evil\.test/.test(etext),
           `GET / with Host evil.test: ${er.status()} ${etext.trim().slice(0, 80)}`);
    const edata = await fromPage(evil, "GET", "/dashboard/data", null, args.token);
    result(edata.status === 403, `GET /dashboard/data with Host evil.test and the token: ${edata.status}`);
  } catch (e) {
    result(false, `browser: ${e.stack || e}`);
  } finally {
    await browser.close();
  }
  process.exit(failed ? 1 : 0);
})();
