# SPDX-License-Identifier: MIT
"""libpinwheel.so through ctypes: where it is found, and <pinwheel/link.h>'s
functions and structures declared for ctypes (ABI mode: no compiler, no
header parsed at run time).

Where the library comes from, the first that loads:
  1. $PINWHEEL_LIBRARY, a path to libpinwheel.so (the tests set it to the
     build they test);
  2. the build tree, when this package is the source tree's python/pinwheel:
     ../../build/libpinwheel.so (what `make` builds);
  3. the system's, once installed (`make install`): the dynamic loader's
     search (libpinwheel.so.1: LD_LIBRARY_PATH, ld.so.cache), then
     /usr/local/lib and /usr/lib.
"""
import ctypes
import os

_here = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("PINWHEEL_LIBRARY")
    if env:
        yield env
        return
    root = os.path.dirname(os.path.dirname(_here))
    if os.path.exists(os.path.join(root, "include", "pinwheel", "link.h")):
        yield os.path.join(root, "build", "libpinwheel.so")
    yield "libpinwheel.so.1"
    for d in ("/usr/local/lib", "/usr/local/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib"):
        yield os.path.join(d, "libpinwheel.so.1")


def _load():
    tried = []
    for c in _candidates():
        if os.path.sep in c and not os.path.exists(c):
            tried.append(c + " (no such file)")
            continue
        try:
            lib = ctypes.CDLL(c)
            lib.pw_link_create  # a library without the link API is no use
            return lib, c
        except (OSError, AttributeError) as e:
            tried.append(f"{c} ({e})")
    raise ImportError("pinwheel: libpinwheel.so not found; build it (make) or install it "
                      "(make install), or set PINWHEEL_LIBRARY to its path. Tried: " +
                      "; ".join(tried))


lib, path = _load()

c_u64, c_u32, c_u16, c_u8 = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint16, ctypes.c_uint8
c_p = ctypes.c_void_p

PW_LINK_BATCH = 0x1
PW_MAX_TXQ = 256


class Pkt(ctypes.Structure):
    """struct pw_link_pkt"""
    _fields_ = [("time_ns", c_u64), ("tag", c_u64), ("data", c_p), ("len", c_u32),
                ("txq", c_u16), ("dup", c_u8), ("pad_", c_u8), ("reason", c_u32),
                ("pad2_", c_u32)]


PKT_FORMAT = "=QQQIHBBII"  # Pkt's layout, for struct.iter_unpack over an array of them


class Stats(ctypes.Structure):
    """struct pw_link_stats"""
    _fields_ = [(n, c_u64) for n in (
        "now_ns", "sent_bytes", "sent_packets", "qdisc_drops", "overlimits", "requeues",
        "backlog", "qlen", "handed_in", "duplicates", "departed", "dropped", "in_flight")] + [
        ("drops_by_reason", c_u64 * 16)]


class Burst(ctypes.Structure):
    """struct pw_link_burst"""
    _fields_ = [("n", ctypes.c_size_t), ("time_ns", c_p), ("len", c_p), ("data", c_p),
                ("tag", c_p), ("priority", c_p), ("hash", c_p), ("taken", c_p)]


def _fn(name, res, *args):
    f = getattr(lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


LinkP = c_p
create = _fn("pw_link_create", ctypes.c_int, ctypes.POINTER(c_p), ctypes.c_char_p,
             ctypes.c_uint, c_u64, ctypes.c_uint, ctypes.c_char_p, ctypes.c_size_t)
send = _fn("pw_link_send", ctypes.c_int, LinkP, c_u64, ctypes.c_char_p, c_u32, c_u64, c_u32,
           c_u32)
send_burst = _fn("pw_link_send_burst", ctypes.c_long, LinkP, ctypes.POINTER(Burst))
advance = _fn("pw_link_advance", ctypes.c_int, LinkP, c_u64)
now_ns = _fn("pw_link_now_ns", c_u64, LinkP)
departures = _fn("pw_link_departures", ctypes.c_size_t, LinkP, c_p, ctypes.c_size_t)
drops = _fn("pw_link_drops", ctypes.c_size_t, LinkP, c_p, ctypes.c_size_t)
stats = _fn("pw_link_stats", ctypes.c_int, LinkP, ctypes.POINTER(Stats))
tc = _fn("pw_link_tc", ctypes.c_int, LinkP, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
         ctypes.c_char_p, ctypes.c_size_t)
error = _fn("pw_link_error", ctypes.c_char_p, LinkP)
close = _fn("pw_link_close", None, LinkP)
free = _fn("pw_link_free", None, LinkP)
drop_reason_name = _fn("pw_drop_reason_name", ctypes.c_char_p, ctypes.c_int)

REASONS = {r: drop_reason_name(r).decode() for r in range(1, 16)
           if drop_reason_name(r) != b"unknown"}
