// SPDX-License-Identifier: MIT
//
// toxiproxy's own Node client (toxiproxy-node-client, the version that
// tests/netem_api/run_client.sh pins) driving a server through its API
// calls, the same test for the real toxiproxy (the reference) and for
// pinwheel-netem:
//
//   node client_test.js --server toxiproxy|pinwheel --bin PATH --module DIR
//
// (DIR: the installed package, .../node_modules/toxiproxy-node-client).
// It starts the server on a free loopback port, then, through the client's
// classes (Toxiproxy, Proxy, Toxic): creates, lists, reads, updates,
// disables and deletes proxies; populates; adds, reads, updates and removes
// toxics; resets; and measures the toxics' effects through a TCP echo
// server of its own: the latency toxic's added delay (after measuring the
// direct and the toxic-free round trips), the bandwidth toxic's rate over a
// 2 s transfer, timeout (closes, after its time, nothing passing),
// limit_data (exactly N bytes, then the close), slicer (every byte, in
// order) and reset_peer (ECONNRESET).
//
// Timing verdicts.  The "never early" sides are always judged (a latency
// adds at least its value, a timeout closes no sooner than its time).  The
// two-sided ones are judged only when the test's own lateness probe (how
// late 1 ms timers fire in this process, and how long the server's threads
// waited for a CPU, during the measurement: lateProbe() below) finds the
// machine quiet; otherwise the figure is printed with LOADED and not
// judged.  They are: the median round trip with a latency toxic of L, less
// the median direct round trip, within max(3 ms, 5% of L) plus the probe's
// p90 of L; the bandwidth toxic's rate, the bytes over the time from the
// first byte written to the last read, within 5%.  A figure off is
// measured once more before it fails.
//
// Exit: 0 when every check passed, 1 otherwise, 77 (ctest's skip) when the
// client module or the server binary is missing.  Against pinwheel, its
// exit status on SIGTERM must be 0, and a sanitizer's report in its output
// fails the run.  Threads: Node's one event loop; the server is a child
// process.
'use strict';

const net = require('net');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');

const HOST = '127.0.0.1';

function parseArgs() {
	const a = { server: null, bin: null, module: null, only: '' };
	const v = process.argv.slice(2);
	for (let i = 0; i < v.length; i++) {
		const k = v[i].replace(/^--/, '');
		if (!(k in a) || i + 1 >= v.length) {
			console.error(`client_test.js: bad argument ${v[i]}`);
			process.exit(2);
		}
		a[k] = v[++i];
	}
	if (!['toxiproxy', 'pinwheel'].includes(a.server) || !a.bin || !a.module) {
		console.error('usage: client_test.js --server toxiproxy|pinwheel --bin PATH --module DIR');
		process.exit(2);
	}
	return a;
}

class Failure extends Error {}
function check(cond, msg) {
	if (!cond) throw new Failure(msg);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

function freePort() {
	return new Promise((resolve, reject) => {
		const s = net.createServer();
		s.once('error', reject);
		s.listen(0, HOST, () => {
			const p = s.address().port;
			s.close(() => resolve(p));
		});
	});
}

function portOf(listen) {
	const m = /:(\d+)$/.exec(listen);
	check(m, `listen is not HOST:PORT: ${listen}`);
	return Number(m[1]);
}

// bytes that differ per connection and offset: a lost, doubled or
// misplaced byte shows
function pattern(id, n) {
	const b = Buffer.alloc(n);
	let x = (id * 2654435761 + 12345) >>> 0;
	for (let i = 0; i < n; i++) {
		x = (Math.imul(x, 1103515245) + 12345) >>> 0;
		b[i] = (x >>> 16) & 0xff;
	}
	return b;
}

// The echo server: every byte back (pipe: with back-pressure).
function echoServer() {
	return new Promise((resolve) => {
		const conns = new Set();
		const srv = net.createServer((s) => {
			conns.add(s);
			s.on('error', () => {});
			s.on('close', () => conns.delete(s));
			s.pipe(s);
		});
		srv.listen(0, HOST, () => {
			srv.addr = `${HOST}:${srv.address().port}`;
			srv.stop = () => {
				for (const s of conns) s.destroy();
				return new Promise((r) => srv.close(() => r()));
			};
			resolve(srv);
		});
	});
}

// A client connection that keeps what it reads and how it ended.
class Conn {
	constructor(port) {
		this.chunks = [];
		this.len = 0;
		this.ended = null; // 'eof' | error code
		this.endedAt = 0;
		this.waiters = [];
		this.sock = net.connect({ host: HOST, port });
		this.sock.setNoDelay(true);
		this.sock.on('data', (d) => {
			this.chunks.push(d);
			this.len += d.length;
			this.lastAt = nowMs();
			this._wake();
		});
		this.sock.on('end', () => this._end('eof'));
		this.sock.on('error', (e) => this._end(e.code || String(e)));
		this.sock.on('close', () => this._end('eof'));
	}
	connected() {
		return new Promise((resolve, reject) => {
			this.sock.once('connect', resolve);
			this.sock.once('error', reject);
		});
	}
	_end(how) {
		if (this.ended === null) {
			this.ended = how;
			this.endedAt = nowMs();
		}
		this._wake();
	}
	_wake() {
		const w = this.waiters;
		this.waiters = [];
		for (const f of w) f();
	}
	data() {
		return Buffer.concat(this.chunks, this.len);
	}
	take(n) {
		const all = this.data();
		this.chunks = [all.subarray(n)];
		this.len = all.length - n;
		return all.subarray(0, n);
	}
	// until @n bytes are here, or the connection ended, or @ms passed
	async wait(n, ms) {
		const deadline = nowMs() + ms;
		while (this.len < n && this.ended === null && nowMs() < deadline) {
			await new Promise((r) => {
				this.waiters.push(r);
				setTimeout(r, Math.max(1, deadline - nowMs()));
			});
		}
		return this.len >= n;
	}
	async waitEnd(ms) {
		const deadline = nowMs() + ms;
		while (this.ended === null && nowMs() < deadline) {
			await new Promise((r) => {
				this.waiters.push(r);
				setTimeout(r, Math.max(1, deadline - nowMs()));
			});
		}
		return this.ended;
	}
	write(b) {
		this.sock.write(b);
	}
	close() {
		this.sock.destroy();
	}
}

// Round trips of @n pings of 64 bytes on one connection to @port (ms).
async function pings(port, n) {
	const c = new Conn(port);
	await c.connected();
	const rtts = [];
	for (let i = 0; i < n; i++) {
		const msg = pattern(i, 64);
		const t0 = nowMs();
		c.write(msg);
		check(await c.wait(64, 5000), `ping ${i}: no echo (${c.ended})`);
		rtts.push(nowMs() - t0);
		check(c.take(64).equals(msg), `ping ${i}: the echo differs`);
	}
	c.close();
	return rtts;
}

function quantile(v, q) {
	const s = [...v].sort((a, b) => a - b);
	return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

// Time the server's threads spent runnable but not running (ms, summed
// over its threads: the second field of /proc/PID/task/*/schedstat); null
// where the kernel does not say.
function runqWaitMs(pid) {
	try {
		let ns = 0;
		for (const t of fs.readdirSync(`/proc/${pid}/task`))
			ns += Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[1]);
		return ns / 1e6;
	} catch (e) {
		return null;
	}
}

// The lateness probe, run while a measurement runs: 1 ms timers back to
// back in this process (how late each fired), and the time the server's
// threads waited for a CPU.  stop() gives {p50, p90, max, runq, quiet,
// text}: quiet when the timers fired within 2 ms nine times in ten and
// never 25 ms late, and the server's threads waited for a CPU at most 2 ms
// plus 5% of the window in all (a figure measured otherwise is the
// machine's).
function lateProbe(serverPid) {
	const late = [];
	let stopped = false;
	const t0 = nowMs();
	let t = t0;
	const q0 = runqWaitMs(serverPid);
	const tick = () => {
		const n = nowMs();
		late.push(Math.max(0, n - t - 1));
		t = n;
		if (!stopped) setTimeout(tick, 1);
	};
	setTimeout(tick, 1);
	return {
		stop() {
			stopped = true;
			const q1 = runqWaitMs(serverPid);
			const win = nowMs() - t0;
			const r = { n: late.length, p50: quantile(late, 0.5), p90: quantile(late, 0.9),
				    max: Math.max(...late), runq: q0 === null || q1 === null ? null : q1 - q0 };
			r.quiet = r.n > 10 && r.p90 <= 2 && r.max <= 25 &&
				  (r.runq === null || r.runq <= 2 + 0.05 * win);
			r.text = `probe: ${r.n} timers late p50 ${r.p50.toFixed(2)} p90 ${r.p90.toFixed(2)} ` +
				 `max ${r.max.toFixed(2)} ms; the server waited ` +
				 `${r.runq === null ? '?' : r.runq.toFixed(2)} ms for a CPU in ${win.toFixed(0)} ms`;
			return r;
		}
	};
}

// A measured figure: @measure() gives {ok, line, quiet}; judged when quiet,
// once more when off (one stall can spoil a window; an error of the
// server's shows twice), LOADED and not judged when the machine was busy.
async function judged(what, measure) {
	for (let attempt = 1; ; attempt++) {
		const m = await measure();
		if (!m.quiet) {
			console.log(`    LOADED (not judged): ${m.line}`);
			return;
		}
		console.log(`    ${m.line}${m.ok ? '' : ' OFF'}`);
		if (m.ok) return;
		check(attempt < 2, `${what}: off twice: ${m.line}`);
	}
}

// -------------------------------------------------------------- the server

class Server {
	constructor(kind, bin) {
		this.kind = kind;
		this.bin = bin;
		this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'netem_api_client_'));
		this.log = path.join(this.dir, 'server.log');
	}
	async start() {
		for (let attempt = 0; attempt < 5; attempt++) {
			this.port = await freePort();
			const argv = this.kind === 'toxiproxy' ? ['-host', HOST, '-port', String(this.port)]
				: ['--api', `${HOST}:${this.port}`];
			const fd = fs.openSync(this.log, 'a');
			this.proc = spawn(this.bin, argv, { stdio: ['ignore', fd, fd], cwd: this.dir });
			child = this.proc;
			fs.closeSync(fd);
			this.exit = null;
			this.proc.on('exit', (code, sig) => { this.exit = code !== null ? code : sig; });
			const deadline = nowMs() + 15000;
			while (nowMs() < deadline && this.exit === null) {
				if (await this.ready()) return;
				await sleep(50);
			}
			const tail = fs.readFileSync(this.log, 'utf8').slice(-2000);
			if (this.exit === null) {
				this.proc.kill('SIGKILL');
				throw new Failure(`${this.kind} did not answer in 15 s (log ${this.log})`);
			}
			if (!/address already in use/i.test(tail))
				throw new Failure(`${this.kind} exited ${this.exit} at start: ${tail}`);
		}
		throw new Failure('no free port for the API after 5 tries');
	}
	async ready() {
		if (this.kind === 'pinwheel' && !fs.readFileSync(this.log, 'utf8').includes('api listening on'))
			return false;
		return new Promise((resolve) => {
			const s = net.connect({ host: HOST, port: this.port });
			s.on('connect', () => { s.destroy(); resolve(true); });
			s.on('error', () => resolve(false));
		});
	}
	async stop() {
		if (this.exit !== null) return;
		const done = new Promise((r) => this.proc.once('exit', r));
		this.proc.kill('SIGTERM');
		const t = setTimeout(() => this.proc.kill('SIGKILL'), 10000);
		await done;
		clearTimeout(t);
	}
}

// a call that must fail with HTTP status @status (the client's error says
// "Request failed with status code N")
async function rejects(promise, status, what) {
	let err = null;
	try {
		await promise;
	} catch (e) {
		err = e;
	}
	check(err !== null, `${what}: succeeded, expected ${status}`);
	check(err.name !== 'Failure' && String(err.message).includes(`status code ${status}`),
	      `${what}: expected status ${status}, got ${err.message}`);
}

// -------------------------------------------------------------- the checks

const CHECKS = [];
const test = (name, fn) => CHECKS.push({ name, fn });

test('version', async (ctx) => {
	const text = await ctx.tp.getVersion();
	let v = null;
	try {
		v = JSON.parse(text).version;
	} catch (e) {
		v = null;
	}
	check(typeof v === 'string' && v.length > 0, `getVersion(): ${text}`);
});

test('proxies', async (ctx) => {
	const { tp, Toxiproxy } = ctx;
	const p = await tp.createProxy({ name: 'cp', listen: `${HOST}:0`, upstream: ctx.echo.addr });
	check(p.name === 'cp' && p.upstream === ctx.echo.addr && p.enabled === true,
	      `createProxy: ${JSON.stringify(p.toJson())}`);
	check(portOf(p.listen) !== 0, `createProxy: listen port 0 not resolved: ${p.listen}`);
	await rejects(tp.createProxy({ name: 'cp', listen: `${HOST}:0`, upstream: ctx.echo.addr }), 409,
		      'createProxy with a name in use');
	const all = await tp.getAll();
	check(all.cp && all.cp.listen === p.listen, `getAll: ${Object.keys(all)}`);
	const g = await tp.get('cp');
	check(g.name === 'cp' && g.listen === p.listen && g.upstream === ctx.echo.addr, 'get()');
	await rejects(tp.get('nosuch'), 404, 'get() of an unknown proxy');
	// through it
	let r = await pings(portOf(p.listen), 2);
	check(r.length === 2, 'pings');
	// disable, enable (update posts the whole body)
	const d = await p.update({ ...p.toJson(), enabled: false });
	check(d.enabled === false, `update(enabled false): ${JSON.stringify(d.toJson())}`);
	let refused = null;
	const c = new Conn(portOf(p.listen));
	refused = await c.waitEnd(2000);
	check(refused === 'ECONNREFUSED', `a disabled proxy: connect gave ${refused}`);
	const e = await d.update({ ...d.toJson(), enabled: true });
	check(e.enabled === true, 'update(enabled true)');
	r = await pings(portOf(e.listen), 2);
	await e.remove();
	await rejects(tp.get('cp'), 404, 'get() after remove()');
	await rejects(e.remove(), 404, 'remove() twice');
	check(Toxiproxy !== undefined, 'the module exports Toxiproxy');
});

test('populate_reset', async (ctx) => {
	const { tp } = ctx;
	const ps = await tp.populate([
		{ name: 'pp1', listen: `${HOST}:0`, upstream: ctx.echo.addr },
		{ name: 'pp2', listen: `${HOST}:0`, upstream: ctx.echo.addr, enabled: false }]);
	check(ps.pp1 && ps.pp2, `populate: ${Object.keys(ps)}`);
	check(ps.pp1.enabled === true && ps.pp2.enabled === false, 'populate: enabled');
	check(portOf(ps.pp1.listen) !== 0, 'populate: port 0 not resolved');
	await ps.pp1.addToxic({ name: 'l1', type: 'latency', stream: 'downstream', toxicity: 1,
				attributes: { latency: 10, jitter: 0 } });
	await tp.reset();
	await rejects(ps.pp1.getToxic('l1'), 404, 'getToxic() after reset()');
	const all = await tp.getAll();
	check(all.pp2.enabled === true, 'reset() did not enable pp2');
	await all.pp1.remove();
	await all.pp2.remove();
});

test('toxics', async (ctx) => {
	const { tp } = ctx;
	const p = await tp.createProxy({ name: 'ct', listen: `${HOST}:0`, upstream: ctx.echo.addr });
	try {
		const t = await p.addToxic({ name: 'lat', type: 'latency', stream: 'upstream', toxicity: 0.5,
					     attributes: { latency: 10, jitter: 2 } });
		check(t.name === 'lat' && t.type === 'latency' && t.stream === 'upstream' &&
		      t.toxicity === 0.5 && t.attributes.latency === 10 && t.attributes.jitter === 2,
		      `addToxic: ${JSON.stringify(t.toJson())}`);
		await rejects(p.addToxic(t.toJson()), 409, 'addToxic with a name in use');
		await rejects(p.addToxic({ name: 'x', type: 'nosuch', stream: 'upstream', toxicity: 1,
					   attributes: {} }), 400, 'addToxic of an unknown type');
		const g = await p.getToxic('lat');
		check(JSON.stringify(g.toJson()) === JSON.stringify(t.toJson()),
		      `getToxic: ${JSON.stringify(g.toJson())}`);
		const u = await t.update({ ...t.toJson(), toxicity: 1, attributes: { latency: 20, jitter: 0 } });
		check(u.attributes.latency === 20 && u.attributes.jitter === 0 && u.toxicity === 1,
		      `toxic update: ${JSON.stringify(u.toJson())}`);
		const g2 = await p.getToxic('lat');
		check(g2.attributes.latency === 20, 'getToxic after update');
		const types = {
			bandwidth: { rate: 1000 }, slow_close: { delay: 10 }, timeout: { timeout: 10 },
			reset_peer: { timeout: 10 }, limit_data: { bytes: 10 },
			slicer: { average_size: 10, size_variation: 5, delay: 10 }
		};
		for (const [type, attributes] of Object.entries(types)) {
			const x = await p.addToxic({ name: type, type, stream: 'downstream', toxicity: 1, attributes });
			for (const [k, v] of Object.entries(attributes))
				check(x.attributes[k] === v, `${type}.${k}: ${JSON.stringify(x.toJson())}`);
			await x.remove();
			await rejects(p.getToxic(type), 404, `getToxic(${type}) after remove()`);
		}
		await u.remove();
		await rejects(u.remove(), 404, 'toxic remove() twice');
	} finally {
		await p.remove();
	}
});

// a proxy to the echo server with @toxics; returns [proxy, port]
async function proxyWith(ctx, name, toxics) {
	const p = await ctx.tp.createProxy({ name, listen: `${HOST}:0`, upstream: ctx.echo.addr });
	for (const t of toxics)
		await p.addToxic({ stream: 'downstream', toxicity: 1, ...t, name: t.name || t.type });
	return [p, portOf(p.listen)];
}

test('latency', async (ctx) => {
	const L = 50;
	const direct = await pings(portOf(ctx.echo.addr), 20);
	const [p, port] = await proxyWith(ctx, 'lat', []);
	try {
		const plain = await pings(port, 20);
		await p.addToxic({ name: 'l', type: 'latency', stream: 'downstream', toxicity: 1,
				   attributes: { latency: L, jitter: 0 } });
		await judged(`latency ${L} ms`, async () => {
			const probe = lateProbe(ctx.server.proc.pid);
			const withL = await pings(port, 12);
			const pr = probe.stop();
			check(Math.min(...withL) >= L - 0.5,
			      `latency ${L} ms: a round trip of ${Math.min(...withL)} ms (early)`);
			// added: beside the direct round trip (the proxy's own cost
			// without a toxic is printed beside)
			const added = quantile(withL, 0.5) - quantile(direct, 0.5);
			const tol = Math.max(3, 0.05 * L) + pr.p90;
			return {
				ok: Math.abs(added - L) <= tol, quiet: pr.quiet,
				line: `latency ${L} ms: direct RTT p50 ${quantile(direct, 0.5).toFixed(3)} ms, ` +
				      `through the proxy ${quantile(plain, 0.5).toFixed(3)} ms, with the toxic ` +
				      `${quantile(withL, 0.5).toFixed(3)} ms: added ${added.toFixed(3)} ms ` +
				      `(tolerance ${tol.toFixed(2)} ms; ${pr.text})`
			};
		});
	} finally {
		await p.remove();
	}
});

test('bandwidth', async (ctx) => {
	const rate = 1000;                  // KB/s (1000 bytes)
	const total = rate * 1000 * 2;      // 2 s of it
	const [p, port] = await proxyWith(ctx, 'bw', [{ type: 'bandwidth', attributes: { rate } }]);
	try {
		await judged(`bandwidth ${rate} KB/s`, async () => {
			const c = new Conn(port);
			await c.connected();
			const data = pattern(3, total);
			let tenth = 0;
			const probe = lateProbe(ctx.server.proc.pid);
			const t0 = nowMs();
			c.sock.on('data', () => { if (!tenth && c.len >= total / 10) tenth = nowMs(); });
			c.write(data);
			const ok = await c.wait(total, 20000);
			const t1 = c.lastAt;
			const pr = probe.stop();
			c.close();
			check(ok, `bandwidth: ${c.len} of ${total} bytes back (${c.ended})`);
			check(c.data().equals(data), 'bandwidth: the bytes came back changed');
			const got = total / ((t1 - t0) / 1000) / 1000;
			const steady = (total * 0.9) / ((t1 - tenth) / 1000) / 1000;
			return {
				ok: Math.abs(got - rate) <= 0.05 * rate, quiet: pr.quiet,
				line: `bandwidth ${rate} KB/s: ${total} bytes in ${(t1 - t0).toFixed(1)} ms = ` +
				      `${got.toFixed(1)} KB/s, within 5%: the first byte written to the last read ` +
				      `(after the first tenth ${steady.toFixed(1)} KB/s; ${pr.text})`
			};
		});
	} finally {
		await p.remove();
	}
});

test('timeout', async (ctx) => {
	const T = 200;
	const [p, port] = await proxyWith(ctx, 'to', [{ type: 'timeout', attributes: { timeout: T } }]);
	try {
		const t0 = nowMs();
		const c = new Conn(port);
		await c.connected();
		c.write(Buffer.from('ping'.repeat(64)));
		const how = await c.waitEnd(5000);
		check(how !== null, `timeout ${T} ms: still open after 5 s`);
		check(c.len === 0, `timeout: ${c.len} bytes got through`);
		check(c.endedAt - t0 >= T - 1, `timeout ${T} ms: closed after ${(c.endedAt - t0).toFixed(1)} ms (early)`);
		c.close();
	} finally {
		await p.remove();
	}
});

test('limit_data', async (ctx) => {
	const N = 1000;
	const [p, port] = await proxyWith(ctx, 'ld', [{ type: 'limit_data', attributes: { bytes: N } }]);
	try {
		const c = new Conn(port);
		await c.connected();
		const data = pattern(5, 5000);
		c.write(data);
		const how = await c.waitEnd(5000);
		check(how !== null, 'limit_data: still open after 5 s');
		check(c.len === N, `limit_data ${N}: ${c.len} bytes came back`);
		check(c.data().equals(data.subarray(0, N)), 'limit_data: the bytes back differ');
		c.close();
	} finally {
		await p.remove();
	}
});

test('slicer', async (ctx) => {
	const [p, port] = await proxyWith(ctx, 'sl', [{ type: 'slicer',
		attributes: { average_size: 16, size_variation: 8, delay: 50 } }]);
	try {
		const c = new Conn(port);
		await c.connected();
		const data = pattern(9, 20000);
		c.write(data);
		const ok = await c.wait(data.length, 20000);
		check(ok, `slicer: ${c.len} of ${data.length} bytes (${c.ended})`);
		check(c.data().equals(data), 'slicer: the bytes came back changed or reordered');
		console.log(`    slicer: ${data.length} bytes in order, in ${c.chunks.length} reads`);
		c.close();
	} finally {
		await p.remove();
	}
});

test('reset_peer', async (ctx) => {
	const T = 100;
	const [p, port] = await proxyWith(ctx, 'rp', [{ type: 'reset_peer', attributes: { timeout: T } }]);
	try {
		const t0 = nowMs();
		const c = new Conn(port);
		await c.connected();
		c.write(Buffer.from('ping'));
		const how = await c.waitEnd(5000);
		check(how === 'ECONNRESET', `reset_peer: the connection ended by ${how}, not ECONNRESET`);
		check(c.endedAt - t0 >= T - 1, `reset_peer ${T} ms: after ${(c.endedAt - t0).toFixed(1)} ms (early)`);
		c.close();
	} finally {
		await p.remove();
	}
});

// -------------------------------------------------------------- main

async function main() {
	const args = parseArgs();
	let mod;
	try {
		mod = require(path.resolve(args.module));
	} catch (e) {
		console.log(`SKIP: the client module ${args.module}: ${e.message}`);
		return 77;
	}
	try {
		fs.accessSync(args.bin, fs.constants.X_OK);
	} catch (e) {
		console.log(`SKIP: ${args.bin}: no executable server binary`);
		return 77;
	}
	const server = new Server(args.server, path.resolve(args.bin));
	try {
		await server.start();
	} catch (e) {
		console.log(`FAIL: start: ${e.message}`);
		return 1;
	}
	const pkg = JSON.parse(fs.readFileSync(path.join(args.module, 'package.json'), 'utf8'));
	console.log(`${args.server} on ${HOST}:${server.port} (log ${server.log}), ` +
		    `client ${pkg.name}@${pkg.version}`);
	const echo = await echoServer();
	const ctx = { tp: new mod.Toxiproxy(`http://${HOST}:${server.port}`), Toxiproxy: mod.Toxiproxy,
		      echo, kind: args.server, server };
	const only = new Set(args.only.split(',').filter((x) => x));
	let passed = 0;
	let failed = 0;
	for (const { name, fn } of CHECKS) {
		if (only.size && !only.has(name)) continue;
		if (server.exit !== null) {
			console.log(`FAIL ${name}: the server is gone (exit ${server.exit})`);
			failed++;
			continue;
		}
		const t0 = nowMs();
		try {
			await fn(ctx);
			passed++;
			console.log(`PASS ${name} (${((nowMs() - t0) / 1000).toFixed(2)} s)`);
		} catch (e) {
			failed++;
			console.log(`FAIL ${name}: ${e instanceof Failure ? e.message : e.stack}`);
		}
	}
	await echo.stop();
	await server.stop();
	// a sanitizer's report in the server's output (UBSan and TSan go on
	// running) fails the run
	const bad = fs.readFileSync(server.log, 'utf8').split('\n').filter((l) =>
		/runtime error:|ERROR: (Address|Leak|Memory|Undefined)Sanitizer|WARNING: ThreadSanitizer/.test(l));
	if (bad.length) {
		failed++;
		console.log(`FAIL sanitizer: the server's log (${server.log}) has ${bad.length} report lines, first: ${bad[0]}`);
	}
	if (server.kind === 'pinwheel' && server.exit !== 0) {
		failed++;
		console.log(`FAIL exit: pinwheel-netem exited ${server.exit} on SIGTERM, expected 0`);
	}
	if (failed === 0) fs.rmSync(server.dir, { recursive: true, force: true });
	console.log(`${passed} passed, ${failed} failed`);
	return failed ? 1 : 0;
}

// the server never outlives the test (a test killed by ctest's timeout
// or a closed stdout included)
process.stdout.on('error', () => {});
let child = null;
process.on('exit', () => { if (child && child.exitCode === null) child.kill('SIGKILL'); });
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
	process.on(sig, () => process.exit(1));

main().then((rc) => process.exit(rc), (e) => {
	console.log(`FAIL: ${e.stack}`);
	process.exit(1);
});
