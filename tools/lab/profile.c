/* SPDX-License-Identifier: MIT */
/* pinwheel-lab's sampling profiler: not written yet. */
#include <errno.h>
#include <stdio.h>

#include "lab.h"

int lab_prof_start(unsigned hz)
{
	(void)hz;
	return -ENOSYS;
}

void lab_prof_stop(void)
{
}

unsigned long lab_prof_total(void)
{
	return 0;
}

unsigned long lab_prof_format(char *buf, size_t len, unsigned top)
{
	(void)top;
	if (len)
		buf[0] = 0;
	return 0;
}

double lab_prof_share(const char *const *substrs)
{
	(void)substrs;
	return 0;
}
