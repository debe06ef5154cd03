# SPDX-License-Identifier: MIT
"""pinwheel: network emulation inside a test, deterministic, in-process.

A Link is the kernel's qdiscs (netem, tbf, htb, fq, mq, ...) configured
with tc's own words, running on a simulated clock: send packets at the
times you choose, move the clock, read what left and when.  No root, no
socket, no waiting for real time; the same seed and the same calls give
the same departures on every machine.

    import pinwheel
    link = pinwheel.Link("netem delay 20ms 5ms loss 1%", seed=7)
    link.send(b"payload", at=0.0, tag=1)   # True if queued, False if dropped on entry
    for d in link.advance(to=1.0):         # departures up to that time, in order
        print(d.time, d.data, d.tag)
    link.tc("qdisc change dev link root netem delay 50ms")
    link.stats()                           # {"sent": ..., "dropped": ..., "backlog": ...}

Over libpinwheel.so's <pinwheel/link.h> through ctypes (pinwheel._lib says
where the library is found).  docs/link.md is the guide.
"""
import array
import ctypes
import struct
import threading

from . import _lib

__all__ = ["Link", "Departure", "Drop", "LinkError", "DEV"]
__version__ = "0.2.0"

DEV = "link"  # the device's name in tc commands
NS = 1_000_000_000
_TAKE = 1024  # packets taken per call into C


class LinkError(ValueError):
    """A refused call: bad tc words (tc's message), a send or an advance
    earlier than the link's clock, a closed link.  .errno is the C
    library's errno (positive)."""

    def __init__(self, msg, errno=0):
        super().__init__(msg)
        self.errno = errno


class Departure:
    """A packet that left the link: time (float s), time_ns, data (bytes as
    they left: netem's corruption shows; None for a packet sent as a
    length), tag, len, dup (True: a copy netem's duplicate made), txq."""
    __slots__ = ("time_ns", "tag", "data", "len", "dup", "txq")

    def __init__(self, time_ns, tag, data, len, dup, txq):
        self.time_ns, self.tag, self.data, self.len, self.dup, self.txq = (
            time_ns, tag, data, len, dup, txq)

    @property
    def time(self):
        return self.time_ns / NS

    def __repr__(self):
        return (f"Departure(time={self.time!r}, tag={self.tag!r}, len={self.len}"
                f"{', dup=True' if self.dup else ''})")


class Drop:
    """A packet that did not leave: time (float s), time_ns, tag, reason
    (the layer's name: netem_loss, qdisc_limit, flush, dev_destroy, ...),
    data, len, dup."""
    __slots__ = ("time_ns", "tag", "reason", "data", "len", "dup")

    def __init__(self, time_ns, tag, reason, data, len, dup):
        self.time_ns, self.tag, self.reason, self.data, self.len, self.dup = (
            time_ns, tag, reason, data, len, dup)

    @property
    def time(self):
        return self.time_ns / NS

    def __repr__(self):
        return f"Drop(time={self.time!r}, tag={self.tag!r}, reason={self.reason!r})"


def _ns(seconds, ns, what):
    if ns is not None:
        if seconds is not None:
            raise TypeError(f"{what}: give seconds or ns, not both")
        return int(ns)
    return None if seconds is None else int(round(seconds * NS))


def _only_shows(command):
    for line in command.splitlines():
        w = line.split("#", 1)[0].split()
        if w and not any(x in ("show", "list", "ls", "lst") for x in w):
            return False
    return True


class Link:
    """A link: a device "link" whose root qdisc (or tree) comes from tc's
    words, on its own simulated clock, starting at 0.

    Link(qdisc=None, seed=0, txqueues=1, batch=None)
      qdisc: what follows `tc qdisc add dev link root` ("netem delay 20ms");
             None: the default qdiscs (pfifo_fast; mq with txqueues > 1)
      batch: tc commands one a line, as tc -batch reads them, run after
             qdisc ("qdisc add dev link root handle 1: htb default 10\\n...")
      seed:  every netem given no `seed` of its own draws from it
      txqueues: the device's TX queues; a packet's flow hash picks one
    Bad words raise LinkError (a ValueError) with tc's message.
    Safe to share between threads (one call at a time).
    """

    def __init__(self, qdisc=None, seed=0, txqueues=1, batch=None):
        self._h = None
        self._lock = threading.Lock()
        self._next_tag = 0
        err = ctypes.create_string_buffer(2048)
        h = ctypes.c_void_p()
        if batch is not None and qdisc is not None:
            words = f"qdisc add dev {DEV} root {qdisc}\n{batch}"
            flags = _lib.PW_LINK_BATCH
        elif batch is not None:
            words, flags = batch, _lib.PW_LINK_BATCH
        else:
            words, flags = qdisc, 0
        if not isinstance(txqueues, int) or not 1 <= txqueues <= _lib.PW_MAX_TXQ:
            raise ValueError(f"txqueues {txqueues!r}: from 1 to {_lib.PW_MAX_TXQ}")
        rc = _lib.create(ctypes.byref(h), None if words is None else words.encode(), flags,
                         int(seed) & (2**64 - 1), txqueues, err, len(err))
        if rc < 0:
            self._raise(rc, err.value.decode(errors="replace"))
        self._h = h
        self._pkts = (_lib.Pkt * _TAKE)()
        self._unpack = struct.Struct(_lib.PKT_FORMAT).iter_unpack

    # ---------------------------------------------------------------- errors

    @staticmethod
    def _raise(rc, msg):
        if rc == -12:  # ENOMEM
            raise MemoryError(msg or "out of memory")
        raise LinkError(msg or f"error {-rc}", -rc)

    def _check(self):
        if self._h is None:
            raise LinkError("the link is freed", 108)

    def _fail(self, rc):
        self._raise(rc, (_lib.error(self._h) or b"").decode(errors="replace"))

    # ------------------------------------------------------------------ clock

    @property
    def now_ns(self):
        """The link's clock, ns."""
        self._check()
        return _lib.now_ns(self._h)

    @property
    def now(self):
        """The link's clock, seconds (float)."""
        return self.now_ns / NS

    # ------------------------------------------------------------------ send

    def send(self, data, at=None, tag=None, priority=0, flow=0, *, at_ns=None):
        """Hand a packet to the link at time `at` (seconds; or `at_ns`; by
        default the link's clock): bytes (its length is len(data), no
        header added), or an int, a length without bytes.  `tag`: any int
        in [0, 2**64) given back with it (default: the count of packets sent
        before it).  `priority`: skb->priority (htb's classid 0xMAJ00MIN as
        MAJ << 16 | MIN, pfifo_fast's band); `flow`: the flow hash (fq's
        flows, the TX queue).  True if the qdisc took it, False if it was
        dropped on entry (see drops())."""
        t = _ns(at, at_ns, "send")
        if tag is None:
            tag = self._next_tag
        if isinstance(data, int):
            buf, n = None, data
        else:
            buf = bytes(data)
            n = len(buf)
        with self._lock:
            self._check()
            if t is None:
                t = _lib.now_ns(self._h)
            rc = _lib.send(self._h, t, buf, n, tag, priority, flow)
            if rc < 0:
                self._fail(rc)
            self._next_tag += 1
        return rc == 1

    def send_many(self, packets, at=None, tags=None, priority=None, flow=None, *, at_ns=None):
        """Many packets in one call: `packets` a sequence of bytes (or of
        ints: lengths without bytes); `at`/`at_ns` one time for all or a
        sequence of non-decreasing times; `tags`, `priority`, `flow` None or
        sequences (tags default to the count of packets sent before each).
        Return: how many the qdisc took (the others were dropped on entry).
        A time earlier than the clock raises LinkError; the packets before
        it were sent."""
        n = len(packets)
        if n == 0:
            return 0
        if isinstance(packets[0], int):
            lens = array.array("I", packets)
            data = None
        else:
            packets = [bytes(p) for p in packets] if not isinstance(packets[0], bytes) else packets
            lens = array.array("I", map(len, packets))
            data = b"".join(packets)
        times = None
        if at_ns is not None or at is not None:
            if at_ns is not None and at is not None:
                raise TypeError("send_many: give at or at_ns, not both")
            if at_ns is not None:
                v = at_ns
                times = array.array("Q", [int(v)] * n if isinstance(v, int) else v)
            elif isinstance(at, (int, float)):
                times = array.array("Q", [int(round(at * NS))] * n)
            else:
                times = array.array("Q", [int(round(x * NS)) for x in at])
            if len(times) != n:
                raise ValueError("send_many: as many times as packets")

        def arr(v, code):
            if v is None:
                return None
            a = array.array(code, [v] * n if isinstance(v, int) else v)
            if len(a) != n:
                raise ValueError("send_many: as many values as packets")
            return a

        pri, fl = arr(priority, "I"), arr(flow, "I")
        taken = bytearray(n)
        taken_c = (ctypes.c_uint8 * n).from_buffer(taken)
        with self._lock:
            self._check()
            tg = arr(tags, "Q") if tags is not None else array.array(
                "Q", range(self._next_tag, self._next_tag + n))
            b = _lib.Burst()
            b.n = n
            b.len = lens.buffer_info()[0]
            b.time_ns = times.buffer_info()[0] if times is not None else None
            b.tag = tg.buffer_info()[0]
            b.priority = pri.buffer_info()[0] if pri is not None else None
            b.hash = fl.buffer_info()[0] if fl is not None else None
            dbuf = ctypes.c_char_p(data) if data is not None else None
            b.data = ctypes.cast(dbuf, ctypes.c_void_p) if dbuf is not None else None
            b.taken = ctypes.addressof(taken_c)
            rc = _lib.send_burst(self._h, ctypes.byref(b))
            if rc < 0:
                self._fail(rc)
            self._next_tag += rc
            if rc < n:
                self._fail(-22)
        del taken_c
        return taken.count(1)

    # ------------------------------------------------------------ departures

    def _take(self, fn, cls):
        out = []
        pk = self._pkts
        addr = ctypes.addressof(pk)
        string_at = ctypes.string_at
        names = _lib.REASONS
        while True:
            n = fn(self._h, addr, _TAKE)
            if n == 0:
                return out
            mv = memoryview(pk).cast("B")[:n * ctypes.sizeof(_lib.Pkt)]
            if cls is Departure:
                for t, tag, data, ln, txq, dup, _, _, _ in self._unpack(mv):
                    out.append(Departure(t, tag, string_at(data, ln) if data else None, ln,
                                         dup == 1, txq))
            else:
                for t, tag, data, ln, _, dup, _, reason, _ in self._unpack(mv):
                    out.append(Drop(t, tag, names.get(reason, str(reason)),
                                    string_at(data, ln) if data else None, ln, dup == 1))
            if n < _TAKE:
                return out

    def advance(self, to=None, *, to_ns=None):
        """Move the clock to `to` (seconds; or `to_ns`; by default where it
        is) and return the departures not yet returned, in order (time,
        then release order), up to that time.  Drops go to drops()."""
        t = _ns(to, to_ns, "advance")
        with self._lock:
            self._check()
            if t is not None:
                rc = _lib.advance(self._h, t)
                if rc < 0:
                    self._fail(rc)
            return self._take(_lib.departures, Departure)

    def drops(self):
        """The drops since the last call, in order: Drop(time, tag, reason)."""
        with self._lock:
            self._check()
            return self._take(_lib.drops, Drop)

    # -------------------------------------------------------------------- tc

    def tc(self, command):
        """Run tc commands on the link at its clock (what follows `tc`,
        optionally led by -s, -d, -j; several one a line) and return what
        tc prints.  A change keeps queued packets; a replace or delete
        flushes them to drops() (reason "flush").  Bad words raise
        LinkError with tc's message."""
        size = 1 << 16
        while True:
            out = ctypes.create_string_buffer(size)
            err = ctypes.create_string_buffer(2048)
            with self._lock:
                self._check()
                rc = _lib.tc(self._h, command.encode(), out, size, err, len(err))
            if rc == -28 and size < (1 << 28) and _only_shows(command):
                size <<= 4  # ENOSPC: a longer show (a show changes nothing: run it again)
                continue
            if rc < 0:
                self._raise(rc, err.value.decode(errors="replace"))
            return out.value.decode(errors="replace")

    def stats(self):
        """The root qdisc's figures as tc -s shows them (sent, sent_bytes,
        dropped, overlimits, requeues, backlog bytes, qlen) and the link's
        ledger (handed_in, duplicates, departed, dropped_total, in_flight,
        drops_by_reason), at its clock (now, now_ns)."""
        st = _lib.Stats()
        with self._lock:
            self._check()
            _lib.stats(self._h, ctypes.byref(st))
        return {
            "now": st.now_ns / NS, "now_ns": st.now_ns,
            "sent": st.sent_packets, "sent_bytes": st.sent_bytes,
            "dropped": st.qdisc_drops, "overlimits": st.overlimits, "requeues": st.requeues,
            "backlog": st.backlog, "qlen": st.qlen,
            "handed_in": st.handed_in, "duplicates": st.duplicates,
            "departed": st.departed, "dropped_total": st.dropped, "in_flight": st.in_flight,
            "drops_by_reason": {_lib.REASONS.get(r, str(r)): st.drops_by_reason[r]
                                for r in range(16) if st.drops_by_reason[r]},
        }

    # ------------------------------------------------------------------ end

    def close(self):
        """End the link: what is inside comes back as drops (reason
        dev_destroy); departures and drops can still be read."""
        with self._lock:
            if self._h is not None:
                _lib.close(self._h)

    def free(self):
        """Free the link now (what was not read is lost)."""
        with self._lock:
            if self._h is not None:
                _lib.free(self._h)
                self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            if self._h is not None:
                _lib.free(self._h)
                self._h = None
        except Exception:
            pass
