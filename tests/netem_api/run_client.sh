#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Runs tests/netem_api/client_test.js (toxiproxy's Node client driving a
# server) with the client at its pinned version:
#
#   run_client.sh toxiproxy|pinwheel SERVER_BINARY BUILD_DIR
#
# Finds node (none: exit 77, ctest's skip, saying so), finds
# toxiproxy-node-client under $PW_NPM_PREFIX or else BUILD_DIR/npm, installs
# it there with npm when it is missing (no npm, or npm cannot reach its
# registry: exit 77 saying so), then runs the test; its exit status is this
# script's.  .ci/run installs the client beforehand into a scratch folder
# and passes it as PW_NPM_PREFIX.
set -u

CLIENT=toxiproxy-node-client
CLIENT_VERSION=4.1.0

if [ $# -ne 3 ]; then
	echo "usage: $0 toxiproxy|pinwheel SERVER_BINARY BUILD_DIR" >&2
	exit 2
fi
kind=$1
bin=$2
build=$3
here=$(cd "$(dirname "$0")" && pwd)

node=$(command -v node || command -v nodejs || true)
if [ -z "$node" ]; then
	echo "SKIP: no node (Debian: apt-get install nodejs npm): the toxiproxy client test needs Node 18 or later"
	exit 77
fi
major=$("$node" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 18 ]; then
	echo "SKIP: node $("$node" --version) is too old: $CLIENT $CLIENT_VERSION needs Node 18 or later (its fetch)"
	exit 77
fi

prefix=${PW_NPM_PREFIX:-$build/npm}
case $prefix in /*) ;; *) prefix=$PWD/$prefix ;; esac
module=$prefix/node_modules/$CLIENT
have_version() {
	[ -f "$module/package.json" ] &&
		[ "$("$node" -p "require('$module/package.json').version" 2>/dev/null)" = "$CLIENT_VERSION" ]
}
if ! have_version; then
	npm=$(command -v npm || true)
	if [ -z "$npm" ]; then
		echo "SKIP: $CLIENT@$CLIENT_VERSION is not under $prefix and there is no npm to install it (Debian: apt-get install npm)"
		exit 77
	fi
	mkdir -p "$prefix"
	echo "installing $CLIENT@$CLIENT_VERSION under $prefix"
	if ! "$npm" install --no-audit --no-fund --prefix "$prefix" "$CLIENT@$CLIENT_VERSION" \
		>"$prefix/npm-install.log" 2>&1 || ! have_version; then
		echo "SKIP: npm could not install $CLIENT@$CLIENT_VERSION (offline?); its log:"
		tail -n 5 "$prefix/npm-install.log"
		exit 77
	fi
fi

exec "$node" "$here/client_test.js" --server "$kind" --bin "$bin" --module "$module"
