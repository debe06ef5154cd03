#!/usr/bin/env bash
# The Debian packages (debian/), built and checked as a user would use them:
# run by .ci/run after the suite (so the packages' build skips the tests).
#   1. the build dependencies from debian/control (apt-get build-dep ./)
#      and systemd (for systemd-analyze: it needs no running systemd);
#   2. dpkg-buildpackage -b -us -uc in a copy of the tracked tree under
#      build-deb/ (it writes its .deb files beside the tree it builds);
#   3. the packages installed (apt-get install ./*.deb, dependencies from
#      the archive), the list printed;
#   4. systemd-analyze verify on the installed pinwheel-netem.service, and
#      the man pages present;
#   5. examples/hello_timer.c built against the installed libpinwheel-dev
#      twice, by pkg-config and by find_package(pinwheel), linked to
#      /usr/lib's libpinwheel.so.1 and run; pinwheel-netem -version.
# Needs root (apt, dpkg).  Exit status: non-zero at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n '1s/^pinwheel (\([^)]*\)).*/\1/p' debian/changelog)
[[ -n $version ]] || { echo "package.sh: no version in debian/changelog"; exit 1; }

echo "== packages: build dependencies"
export DEBIAN_FRONTEND=noninteractive
if ! command -v dpkg-buildpackage >/dev/null || ! command -v dh >/dev/null ||
   ! command -v systemd-analyze >/dev/null; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends dpkg-dev debhelper systemd
fi
apt-get build-dep -y -q ./ >/dev/null

echo "== packages: dpkg-buildpackage -b -us -uc (pinwheel $version)"
rm -rf build-deb
src=build-deb/pinwheel-$version
mkdir -p "$src"
git ls-files -co --exclude-standard -z | tar --null -cf - -T - | tar -xf - -C "$src"
(cd "$src" && dpkg-buildpackage -b -us -uc -j"$(nproc)" >../dpkg-buildpackage.log 2>&1) || {
  tail -50 build-deb/dpkg-buildpackage.log; exit 1; }
debs=()
for p in libpinwheel1 libpinwheel-dev pinwheel-tools pinwheel-netem; do
  debs+=("build-deb/${p}_${version}_$(dpkg --print-architecture).deb")
done
for d in "${debs[@]}"; do
  dpkg-deb -W --showformat='${Package} ${Version} ${Architecture}: ${Installed-Size} KiB\n' "$d"
done

echo "== packages: installed"
apt-get install -y -q --no-install-recommends "${debs[@]/#/./}" >/dev/null
dpkg -l libpinwheel1 libpinwheel-dev pinwheel-tools pinwheel-netem | grep '^ii'

echo "== packages: the man pages, systemd-analyze verify pinwheel-netem.service"
contents=$(for d in "${debs[@]}"; do dpkg-deb -c "$d"; done)
for m in pinwheel-tc pinwheel-lab pinwheel-netem; do
  grep -q "/man1/$m\.1\.gz$" <<<"$contents" ||
    { echo "package.sh: no man page for $m in the packages"; exit 1; }
done
unit=$(dpkg -L pinwheel-netem | grep '/pinwheel-netem\.service$')
# A container's dpkg may leave man pages out (path-exclude): then the
# unit's Documentation=man: cannot be checked, the rest still is.
man_opt=()
[[ -e /usr/share/man/man1/pinwheel-netem.1.gz ]] || man_opt=(--man=no)
systemd-analyze verify "${man_opt[@]}" "$unit"

echo "== packages: an example against the installed libpinwheel-dev"
gcc -Wall -Wextra -Werror -std=c11 examples/hello_timer.c -o build-deb/hello_pc \
  $(pkg-config --cflags --libs pinwheel)
ldd build-deb/hello_pc | grep -Eq '=> (/usr)?/lib/[^ ]*/libpinwheel\.so\.1 ' ||
  { ldd build-deb/hello_pc; echo "package.sh: not linked to the installed libpinwheel.so.1"; exit 1; }
./build-deb/hello_pc
cmake -S examples -B build-deb/example >/dev/null
cmake --build build-deb/example --target hello_timer >/dev/null
./build-deb/example/hello_timer
pinwheel-netem -version
echo "== packages: ok"
