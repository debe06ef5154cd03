#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
The map, checked: docs/design/layout.md against the tree and the rules it
states (run by `make test` as the test `layout`).

What it checks, each a failure with the file and the rule named:
  1. The map is true both ways: every source file of the tree (*.c, *.h,
     *.sh, *.py under include/, src/, tools/, bench/, tests/ (not the tc
     cases), fuzz/, examples/) is listed in layout.md under its folder's
     heading, and every file layout.md lists exists.
  2. The include directions, read from the #include lines, each resolved
     as the compiler would (the including file's folder first):
       - public headers include only public headers;
       - src/time includes nothing of src/net, src/net nothing of src/time
         (it uses the timer subsystem through include/pinwheel/ only);
       - the net layer's kernel side (src/net/*, src/net/sched/*) includes
         nothing of tc's side (src/net/tc/): tc builds on the kernel side;
       - bench/, tools/ and examples/ include nothing of src/ (and their
         CMakeLists.txt add no src/ folder to the include path);
       - the leaves (layout.md's list under "Leaves") include no project
         header but other leaves.
  3. With --objects DIR (the library's object files, which CMake keeps under
     CMakeFiles/pinwheel_obj.dir): the call graph between translation
     units (a file that references a symbol another defines calls it), its
     cycles (strongly connected components of more than one file), and
       - nothing outside src/net/tc/ calls into it, and so no cycle holds
         both a file of src/net/tc/ and one outside it;
       - no more cycles than layout.md's "Allowed cycles" lists, each of
         them within the set of files listed there.
  4. With --tools-objects DIR (the tools' build folder, build/tools: each
     target's objects under CMakeFiles/TARGET.dir, the harness's under
     common/): the same call graph between the tools' translation units
     (tools/**), and every cycle of it within one folder (tools/netem/tcp/,
     tools/lab/model/, ...): a cycle across two folders of the tools fails,
     naming its files.

Exit 0 when every check holds; 1 with one line per failure otherwise.
Python 3 standard library and binutils' nm only.
"""
import argparse
import os
import re
import subprocess
import sys

CODE_DIRS = ["include", "src", "tools", "bench", "tests", "fuzz", "examples"]
CODE_EXT = (".c", ".h", ".sh", ".py")
SKIP_DIRS = {os.path.join("tests", "tc", "cases"), os.path.join("fuzz", "corpus")}

failures = []


def fail(msg):
    failures.append(msg)


def tree_files(root):
    out = []
    for top in CODE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(dirpath, root)
            dirnames[:] = [d for d in dirnames
                           if os.path.join(rel, d) not in SKIP_DIRS and not d.startswith(".")]
            for f in filenames:
                if f.endswith(CODE_EXT):
                    out.append(os.path.normpath(os.path.join(rel, f)))
    return sorted(out)


def expand(name):
    """`a.c/.h` -> a.c, a.h; otherwise the name itself."""
    m = re.fullmatch(r"(.+)(\.[a-z]+)/(\.[a-z]+)", name)
    if m:
        return [m.group(1) + m.group(2), m.group(1) + m.group(3)]
    return [name]


def read_map(path):
    """The files layout.md lists (by its folder headings and the first
    column of each table), its leaves and its allowed cycles."""
    listed = {}
    leaves, cycles = set(), []
    section = None
    cur = None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            h = re.match(r"^#{2,3} +`?([A-Za-z0-9_./-]+/)`?", line)
            if h:
                cur = h.group(1)
                section = None
                continue
            if re.match(r"^#{2,3} +Leaves", line):
                section, cur = "leaves", None
                continue
            if re.match(r"^#{2,3} +Allowed cycles", line):
                section, cur = "cycles", None
                continue
            if re.match(r"^#{1,3} ", line):
                section, cur = None, None
                continue
            if section == "leaves" and line.startswith("- "):
                for n in re.findall(r"`([^`]+)`", line):
                    for x in expand(n):
                        leaves.add(os.path.normpath(x))
                continue
            if section == "cycles" and line.startswith("- "):
                cycles.append({os.path.normpath(x) for n in re.findall(r"`([^`]+)`", line)
                               for x in expand(n)})
                continue
            if cur and line.startswith("|"):
                first = line.split("|")[1]
                for n in re.findall(r"`([^`]+)`", first):
                    for x in expand(n):
                        p = os.path.normpath(os.path.join(cur, x))
                        listed[p] = True
    return listed, leaves, cycles


def check_map(root, files, listed):
    fs = set(files)
    for f in files:
        if f not in listed:
            fail(f"map: {f} is not in docs/design/layout.md")
    for p in listed:
        if p.endswith(CODE_EXT) and not os.path.exists(os.path.join(root, p)):
            fail(f"map: docs/design/layout.md lists {p}, which does not exist")
        elif not p.endswith(CODE_EXT) and not os.path.exists(os.path.join(root, p)):
            fail(f"map: docs/design/layout.md lists {p}, which does not exist")
    return fs


INC = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def includes(root, f):
    out = []
    with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = INC.match(line)
            if m:
                out.append((m.group(1), m.group(2)))
    return out


def resolve(root, f, kind, name):
    """The project file an include names, relative to root, or None (a
    system header)."""
    if kind == '"':
        p = os.path.normpath(os.path.join(os.path.dirname(f), name))
        if os.path.exists(os.path.join(root, p)):
            return p
    p = os.path.normpath(os.path.join("include", name))
    if os.path.exists(os.path.join(root, p)):
        return p
    if kind == '"':
        # the folders the build adds for tests and fuzz targets
        dirs = ["src/net", "src/time", "tests", "bench"]
        for top in ("tools", "tests"):
            for dirpath, dirnames, _ in os.walk(os.path.join(root, top)):
                dirnames[:] = [x for x in dirnames if x not in ("cases", "corpus")]
                dirs.append(os.path.relpath(dirpath, root))
        for d in dirs:
            p = os.path.normpath(os.path.join(d, name))
            if os.path.exists(os.path.join(root, p)):
                return p
        fail(f"include: {f}: \"{name}\" resolves to no file of the tree")
    return None


def under(p, d):
    return p == d or p.startswith(d.rstrip("/") + "/")


def check_includes(root, files, leaves):
    for f in files:
        if not f.endswith((".c", ".h")):
            continue
        for kind, name in includes(root, f):
            t = resolve(root, f, kind, name)
            if t is None:
                continue
            if under(f, "include") and not under(t, "include"):
                fail(f"include: public header {f} includes {t}")
            if under(f, "src/time") and under(t, "src/net"):
                fail(f"include: {f} (src/time) includes {t} (src/net)")
            if under(f, "src/net") and under(t, "src/time"):
                fail(f"include: {f} (src/net) includes {t}: src/time only through include/pinwheel/")
            if under(f, "src/net") and not under(f, "src/net/tc") and under(t, "src/net/tc"):
                fail(f"include: {f} (the kernel side) includes {t} (tc's side)")
            for d in ("bench", "tools", "examples"):
                if under(f, d) and under(t, "src"):
                    fail(f"include: {f} ({d}/) includes {t} (src/ internals)")
            if f in leaves and not under(t, "include") and t not in leaves:
                fail(f"include: leaf {f} includes {t}, which is not a leaf")
    for d in ("bench", "tools", "examples"):
        cm = os.path.join(root, d, "CMakeLists.txt")
        if os.path.exists(cm):
            with open(cm, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    code = line.split("#", 1)[0]
                    if "include_directories" in code or "INCLUDE_DIRECTORIES" in code:
                        if re.search(r"/src\b", code):
                            fail(f"include: {d}/CMakeLists.txt:{n} adds a src/ folder to the include path")


def symbols(obj):
    r = subprocess.run(["nm", "--defined-only", "-g", obj], capture_output=True, text=True)
    defs = {l.split()[-1] for l in r.stdout.splitlines() if len(l.split()) >= 3}
    r = subprocess.run(["nm", "-u", obj], capture_output=True, text=True)
    undef = {l.split()[-1] for l in r.stdout.splitlines() if l.strip()}
    return defs, undef


def sccs(nodes, edges):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def check_calls(root, objdir, allowed):
    objs = {}
    for dirpath, _, filenames in os.walk(objdir):
        for f in filenames:
            if f.endswith(".o"):
                full = os.path.join(dirpath, f)
                src = os.path.relpath(full, objdir)[:-2]  # src/net/tc/tc.c
                if os.path.exists(os.path.join(root, src)):  # not a stale object
                    objs[src] = full
    if not objs:
        fail(f"calls: no object files under {objdir}")
        return
    defs, undefs = {}, {}
    for src, o in objs.items():
        d, u = symbols(o)
        undefs[src] = u
        for s in d:
            defs[s] = src
    edges = {}
    for src, u in undefs.items():
        for s in u:
            t = defs.get(s)
            if t and t != src:
                edges.setdefault(src, set()).add(t)
    for src, ts in edges.items():
        for t in ts:
            if under(t, "src/net/tc") and not under(src, "src/net/tc"):
                fail(f"calls: {src} (the kernel side) calls into tc's side ({t})")
    cyc = [c for c in sccs(objs.keys(), edges) if len(c) > 1]
    for c in cyc:
        tc = [f for f in c if under(f, "src/net/tc")]
        if tc and len(tc) != len(c):
            fail("calls: a cycle holds tc's side and the kernel side: " + ", ".join(sorted(c)))
        if not any(c <= a for a in allowed):
            fail("calls: a cycle layout.md does not allow: " + ", ".join(sorted(c)))
    if len(cyc) > len(allowed):
        fail(f"calls: {len(cyc)} cycles, layout.md allows {len(allowed)}")
    print(f"layout: {len(objs)} translation units, {sum(len(v) for v in edges.values())} "
          f"calling edges, {len(cyc)} cycles:")
    for c in sorted(cyc, key=lambda c: sorted(c)):
        print("  - " + ", ".join(sorted(c)))


def tools_objects(root, objdir):
    """The tools' object files by source (tools/...): build/tools/X/CMakeFiles/
    T.dir/REST.o is tools/X/REST.  Stale objects (no such source) are left
    out."""
    objs = {}
    for dirpath, _, filenames in os.walk(objdir):
        for f in filenames:
            if not f.endswith(".o"):
                continue
            full = os.path.join(dirpath, f)
            parts = os.path.relpath(full, objdir).split(os.sep)
            if "CMakeFiles" not in parts:
                continue
            k = parts.index("CMakeFiles")
            if k + 1 >= len(parts) or not parts[k + 1].endswith(".dir"):
                continue
            src = os.path.join("tools", *parts[:k], *parts[k + 2:])[:-2]
            if os.path.exists(os.path.join(root, src)):
                objs.setdefault(os.path.normpath(src), []).append(full)
    return objs


def check_tool_calls(root, objdir):
    objs = tools_objects(root, objdir)
    if not objs:
        fail(f"calls: no tools object files under {objdir}")
        return
    defs, undefs = {}, {}
    for src, os_ in objs.items():
        u = set()
        for o in os_:
            d, uu = symbols(o)
            u |= uu
            for s in d:
                defs.setdefault(s, set()).add(src)
        undefs[src] = u
    edges = {}
    for src, u in undefs.items():
        for s in u:
            for t in defs.get(s, ()):
                if t != src:
                    edges.setdefault(src, set()).add(t)
    cyc = [c for c in sccs(objs.keys(), edges) if len(c) > 1]
    for c in cyc:
        if len({os.path.dirname(f) for f in c}) > 1:
            fail("calls: a cycle across the tools' folders: " + ", ".join(sorted(c)))
    print(f"layout: tools: {len(objs)} translation units, "
          f"{sum(len(v) for v in edges.values())} calling edges, {len(cyc)} cycles "
          "(each must stay within one folder):")
    for c in sorted(cyc, key=lambda c: sorted(c)):
        print("  - " + ", ".join(sorted(c)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--objects", help="the library's object folder (CMakeFiles/pinwheel_obj.dir)")
    ap.add_argument("--tools-objects", help="the tools' build folder (build/tools)")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    listed, leaves, allowed = read_map(os.path.join(root, "docs", "design", "layout.md"))
    files = tree_files(root)
    check_map(root, files, listed)
    check_includes(root, files, leaves)
    if a.objects:
        check_calls(root, os.path.abspath(a.objects), allowed)
    if a.tools_objects:
        check_tool_calls(root, os.path.abspath(a.tools_objects))
    for f in failures:
        print("FAIL " + f)
    print(f"layout: {len(files)} files, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
