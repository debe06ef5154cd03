#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Regenerate the expectations of the tc conformance cases whose `ref` is
# "kernel" from the live kernel + iproute2 (../shared/tools/kernel-tc: a
# veth in a throwaway network namespace), so that those expectations are
# Linux's, not pinwheel's.  Needs root, python3 and kernel-tc.
#
#   bash tests/tc/regen.sh [CASE...]        (default: every "kernel" case)
#   KERNEL_TC=/path/to/kernel-tc bash tests/tc/regen.sh ...
#
# What it writes: stdout, stderr, status of each case, from kernel-tc run
# with the case's args on its batch (include + cmd, as "cmd" in a scratch
# directory, as run.sh does), with two transformations, both for known and
# accepted departures (see src/net/tc/tc.c's essay and tests/tc/run.sh):
#
#  1. The default root.  kernel-tc's device is a veth, whose default qdisc
#     is noqueue ("qdisc noqueue 0: root refcnt 2 "); pinwheel's devices get
#     the kernel's default for a real NIC: pfifo_fast on one TX queue, mq
#     with a pfifo_fast per queue on several.  The noqueue line (with its
#     -s statistics lines, or its JSON object) is replaced by what Linux
#     prints for that default -- the same pfifo_fast / mq text that the
#     kernel prints for an explicit mq's children, checked against
#     kernel-tc output when this script was written.  (In shell terms: a
#     sed of the noqueue line, which for N queues expands to N+1 lines.)
#
#  2. Commands after which tc exits at once (invarg(), duparg(), an
#     incomplete command line: exit status 255, nothing more of the batch
#     runs).  pinwheel returns an error instead and the batch goes on
#     (with -force) or stops, like any failed command, with "Command
#     failed cmd:LINE".  To get the kernel's output for the rest of the
#     batch, such a line is found by running prefixes of the batch, its
#     message kept and followed by "Command failed cmd:LINE", and the line
#     blanked (a failed command changes nothing, so the rest runs as it
#     would have).
#
# Everything else is kernel-tc's output byte for byte.  Cases must avoid
# what differs for reasons that are not pinwheel's (see run.sh's cases):
# automatic handles (global in the kernel), `qdisc show` without dev (the
# namespace's lo and veth peer), and more than one filtered `qdisc show`
# in a batch (iproute2 6.1 keeps the filter in static variables).
set -u
here=$(cd "$(dirname "$0")" && pwd)
ktc=${KERNEL_TC:-$here/../../../shared/tools/kernel-tc}
[[ -x $ktc ]] || { echo "regen.sh: no kernel-tc at $ktc (set KERNEL_TC)" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "regen.sh: kernel-tc needs root" >&2; exit 2; }
command -v python3 >/dev/null || { echo "regen.sh: needs python3" >&2; exit 2; }

exec python3 - "$ktc" "$here/cases" "$@" <<'PYEOF'
import os, re, shutil, subprocess, sys, tempfile

ktc, cases = sys.argv[1], sys.argv[2]
names = sys.argv[3:] or sorted(n for n in os.listdir(cases)
                               if os.path.isdir(os.path.join(cases, n)))

PRIO = "bands 3 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1"
PRIOJ = ('"options":{"bands":3,"priomap":[1,2,2,2,1,2,0,0,1,1,1,1,1,1,1,1],'
         '"multiqueue":false}')

def default_root(s, ntxq, js):
    """kernel-tc's veth noqueue default root -> Linux's default for a NIC."""
    if js:
        def rep(m):
            dev, stats = m.group(1) or '', m.group(2) or ''
            if ntxq == 1:
                return ('{"kind":"pfifo_fast","handle":"0:",%s"root":true,"refcnt":2,%s%s}'
                        % (dev, PRIOJ, stats))
            objs = ['{"kind":"mq","handle":"0:",%s"root":true,"options":{}%s}' % (dev, stats)]
            for i in range(ntxq, 0, -1):
                objs.append('{"kind":"pfifo_fast","handle":"0:",%s"parent":":%x",%s%s}'
                            % (dev, i, PRIOJ, stats))
            return ','.join(objs)
        return re.sub(r'\{"kind":"noqueue","handle":"0:",("dev":"[^"]*",)?"root":true,'
                      r'"refcnt":2,"options":\{\}((?:,"[a-z_]+":\d+)*)\}', rep, s)
    lines, out, i = s.split('\n'), [], 0
    while i < len(lines):
        m = re.match(r'^qdisc noqueue 0: (dev \S+ )?root refcnt 2 $', lines[i])
        if not m:
            out.append(lines[i]); i += 1; continue
        dev = m.group(1) or ''
        j = i + 1
        while j < len(lines) and lines[j].startswith(' '):
            j += 1
        stats = lines[i + 1:j]           # -s: the qdisc's statistics lines
        if ntxq == 1:
            out.append('qdisc pfifo_fast 0: %sroot refcnt 2 %s' % (dev, PRIO)); out += stats
        else:
            out.append('qdisc mq 0: %sroot ' % dev); out += stats
            for q in range(ntxq, 0, -1):
                out.append('qdisc pfifo_fast 0: %sparent :%x %s' % (dev, q, PRIO)); out += stats
        i = j
    return '\n'.join(out)

def logical(lines):
    """Physical line ranges [a, b) of the batch's commands (tc joins a
    trailing backslash with the next line)."""
    cmds, a = [], 0
    for k, l in enumerate(lines):
        if not l.split('#', 1)[0].rstrip('\n').endswith('\\'):
            cmds.append((a, k + 1)); a = k + 1
    if a < len(lines):
        cmds.append((a, len(lines)))
    return cmds

def run(tmp, lines, flags):
    with open(os.path.join(tmp, 'cmd'), 'w') as f:
        f.write(''.join(lines))
    p = subprocess.run([ktc] + flags + ['-batch', 'cmd'], cwd=tmp,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.stdout.decode(), p.stderr.decode(), p.returncode

def regen(name):
    d = os.path.join(cases, name)
    ref = open(os.path.join(d, 'ref')).read().strip() if os.path.exists(os.path.join(d, 'ref')) else ''
    if ref != 'kernel':
        return None
    lines = []
    if os.path.exists(os.path.join(d, 'include')):
        inc = open(os.path.join(d, 'include')).readline().strip()
        lines += open(os.path.join(d, inc)).readlines()
    lines += open(os.path.join(d, 'cmd')).readlines()
    if lines and not lines[-1].endswith('\n'):
        lines[-1] += '\n'
    flags = open(os.path.join(d, 'args')).read().split() if os.path.exists(os.path.join(d, 'args')) else []
    ntxq, js, force = 1, '-j' in flags, '-force' in flags
    for k, a in enumerate(flags):
        if a == '-dev' and ':' in flags[k + 1]:
            ntxq = int(flags[k + 1].split(':')[1])
    tmp = tempfile.mkdtemp(prefix='pw-tc-regen.')
    try:
        out, err, rc = run(tmp, lines, flags)
        if rc == 255:
            # tc exited at once somewhere: walk the commands
            cur = list(lines)
            out = err = ''
            prev_out = prev_err = ''
            failed = False
            for a, b in logical(lines):
                o, e, r = run(tmp, cur[:b], flags)
                if r == 255:
                    assert o == prev_out, name
                    err += e[len(prev_err):] + 'Command failed cmd:%d\n' % b
                    failed = True
                    for k in range(a, b):
                        cur[k] = '\n'
                    if not force:
                        break
                    continue
                out += o[len(prev_out):]; err += e[len(prev_err):]
                prev_out, prev_err = o, e
                if r != 0:
                    failed = True
                    if not force:
                        break
            rc = 1 if failed else 0
        out = default_root(out, ntxq, js)
    finally:
        shutil.rmtree(tmp)
    for fn, text in (('stdout', out), ('stderr', err), ('status', '%d\n' % rc)):
        with open(os.path.join(d, fn), 'w') as f:
            f.write(text)
    return rc

n = 0
for name in names:
    rc = regen(name)
    if rc is not None:
        n += 1
        print('regen %-32s status %d' % (name, rc))
print('%d kernel cases regenerated' % n)
PYEOF
