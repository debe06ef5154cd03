/* SPDX-License-Identifier: MIT */
/* The cache line size the per-CPU and per-group structures are aligned to,
 * so that what one CPU writes does not share a line with another's. */
#ifndef PW_TIME_CACHELINE_H
#define PW_TIME_CACHELINE_H

#define PW_CACHELINE 64

#endif /* PW_TIME_CACHELINE_H */
