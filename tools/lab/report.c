/* SPDX-License-Identifier: MIT */
/* pinwheel-lab's outputs (charts, samples, report): not written yet. */
#include <errno.h>

#include "lab.h"

int lab_write_outputs(const char *dir, const struct lab_result *const *rs, unsigned n,
		      const struct lab_opts *o)
{
	(void)dir, (void)rs, (void)n, (void)o;
	return -ENOSYS;
}
