/* SPDX-License-Identifier: MIT */
/*
 * The extended ack of a configuration request (the kernel's
 * netlink_ext_ack): the messages the kernel side gives back, a line each,
 * into the caller's buffer, which tc's side prints as iproute2 does.
 *
 * Owns: pw__extack_msg(), pw__extack_vmsg().  Context: the thread running
 * a tc command (cfg_lock held, a root lock possibly too); a request is
 * never shared between threads, so no lock is taken here.  A full buffer
 * keeps what fits and drops the rest of the line, still NUL-terminated.
 */
#include "internal.h"

#include <stdio.h>

void pw__extack_vmsg(struct pw__extack *ext, const char *fmt, va_list ap)
{
	if (!ext || !ext->msg || ext->msglen == 0)
		return;
	if (ext->msgused >= ext->msglen - 1)
		return;
	size_t room = ext->msglen - ext->msgused;
	int n = vsnprintf(ext->msg + ext->msgused, room, fmt, ap);
	if (n < 0)
		return;
	ext->msgused += (size_t)n < room ? (size_t)n : room - 1;
	if (ext->msgused < ext->msglen - 1) {
		ext->msg[ext->msgused++] = '\n';
		ext->msg[ext->msgused] = '\0';
	}
}

void pw__extack_msg(struct pw__extack *ext, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pw__extack_vmsg(ext, fmt, ap);
	va_end(ap);
}
