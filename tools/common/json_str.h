/* SPDX-License-Identifier: MIT */
/*
 * json_put_str(): a C string written as a JSON string, for the tools that
 * print their JSON with stdio (pinwheel-lab's report and verdicts,
 * pinwheel-netem's tc toxic reports) rather than through a JSON library.
 * Header-only: the netem data path includes it without linking the
 * harness library.  Any thread; no locks.
 */
#ifndef PW_TOOLS_JSON_STR_H
#define PW_TOOLS_JSON_STR_H

#include <stdio.h>

/* @s (NULL: "") on @f in quotes: '"' and '\\' escaped, newline and tab
 * as \n and \t, other control characters as \u00XX.  Any thread. */
static inline void json_put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

#endif /* PW_TOOLS_JSON_STR_H */
