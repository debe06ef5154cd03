# A file as a C array, for the dashboard's page (tools/netem/api/dashboard.c):
#   cmake -DIN=dashboard.html -DOUT=dashboard_page.h -DNAME=dashboard_page -P embed.cmake
# Run at build time (tools/CMakeLists.txt), so an edit of the page rebuilds
# the binary; the array holds the file's bytes, no NUL added.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" hex "${hex}")
file(WRITE "${OUT}.tmp" "/* generated from ${IN} by embed.cmake: do not edit */\n"
     "static const unsigned char ${NAME}[] = {\n${hex}\n};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
