/* SPDX-License-Identifier: MIT */
/* pinwheel-lab seed001: not written yet. */
#include <errno.h>

#include "lab.h"

int lab_seed001(const struct lab_opts *o, struct lab_result *r)
{
	(void)o, (void)r;
	return -ENOSYS;
}
