/* SPDX-License-Identifier: MIT */
/*
 * Seed 003's tc script (../shared/seeds/003_*.txt): its "tc qd" lines with
 * $EST expanded, as pw_tc() takes them.  Both halves of the lab run it on
 * their eth1: the live experiment (seed003.c) and the model
 * (model_seed003.c); it lives apart so that neither calls into the other.
 *
 * Threads: none (constant data).
 */
#include "lab.h"

const char *const lab_seed003_script[] = {
	"qd add dev eth1 root handle 1: mq",
	"qd add dev eth1 parent 1:1 est 1sec 4sec netem limit 70000 delay 6ms",
	"qd add dev eth1 parent 1:2 est 1sec 4sec netem limit 70000 delay 8ms",
	"qd add dev eth1 parent 1:3 est 1sec 4sec netem limit 70000 delay 10ms",
	"qd add dev eth1 parent 1:4 est 1sec 4sec netem limit 70000 delay 12ms",
	"qd add dev eth1 parent 1:5 est 1sec 4sec netem limit 70000 delay 14ms",
	"qd add dev eth1 parent 1:6 est 1sec 4sec netem limit 70000 delay 16ms",
	"qd add dev eth1 parent 1:7 est 1sec 4sec netem limit 80000 delay 18ms",
	"qd add dev eth1 parent 1:8 est 1sec 4sec netem limit 90000 delay 20ms",
};
const unsigned lab_seed003_script_n =
	sizeof(lab_seed003_script) / sizeof(lab_seed003_script[0]);
