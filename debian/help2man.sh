#!/bin/sh
# help2man.sh TOOL VERSION WHAT: a man page (section 1) from what `TOOL --help`
# prints, on stdout.  A help text whose lines at the margin are upper-case
# headings (NAME, SYNOPSIS, OPTIONS: pinwheel-netem's) keeps them as the
# page's sections; another gets a NAME section, "TOOL - WHAT", and the
# whole text as its SYNOPSIS.  The text is set verbatim (no fill), escaped for
# roff: backslashes doubled, a line that starts with . or ' protected.
set -eu
tool=$1
version=$2
what=$3
name=$(basename "$tool")
help=$("$tool" --help 2>&1) || true
[ -n "$help" ] || { echo "help2man.sh: $tool --help printed nothing" >&2; exit 1; }
upper=$(printf '%s\n' "$name" | tr a-z A-Z)
printf '.TH %s 1 "" "pinwheel %s" "User Commands"\n' "$upper" "$version"
printf '%s\n' "$help" | awk -v name="$name" -v what="$what" '
function esc(s) { gsub(/\\/, "\\e", s); if (s ~ /^[.'"'"']/) s = "\\&" s; return s }
NR == 1 && $0 !~ /^[A-Z][A-Z ]+$/ {
	print ".SH NAME"; print name " \\- " what; print ".SH SYNOPSIS"; print ".nf"; open = 1
}
/^[A-Z][A-Z ]+$/ { if (open) print ".fi"; print ".SH " $0; print ".nf"; open = 1; next }
{ print esc($0) }
END { if (open) print ".fi" }'
