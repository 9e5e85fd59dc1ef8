#!/usr/bin/env bash
# test-deps.sh installs what the browser tests need, without any browser or
# driver download from a CDN:
#
#   - Debian's Chromium at /usr/bin/chromium, yaz (yaz-marcdump, the second
#     opinion the MARC tests compare with, and yaz-ztest, the Z39.50 and SRU
#     server the copy cataloguing tests search) and libxml2-utils (xmllint, which
#     validates the OAI-PMH answers against the schema in opac/testdata) and
#     lighttpd (the real web server e2e/lighttpd_test.go runs Stacks behind, as
#     CGI and as FastCGI) and buildah (cmd/stacks/build_test.go builds the
#     Dockerfile's image with it), only if they are missing; lighttpd's package does not
#     start its service where policy-rc.d forbids it (containers), and the tests
#     start their own on loopback with their own configuration either way;
#   - the Playwright driver that playwright-go pins, assembled from the npm
#     package playwright-core into ${PLAYWRIGHT_DRIVER_PATH:-~/.cache/ms-playwright-go/<version>};
#   - axe-core, the accessibility checker the e2e suite injects into pages, at
#     the version e2e/axe_test.go pins (axeCoreVersion), unpacked from npm into
#     ${XDG_CACHE_HOME:-~/.cache}/stacks-test/axe-core-<version>/package/.
#
# It is idempotent and takes a few seconds when everything is already there.
# `make test` and `make e2e` run it first; run it by hand after changing the
# playwright-go version in go.mod.
set -euo pipefail

PW_MODULE=github.com/playwright-community/playwright-go
CHROMIUM=/usr/bin/chromium

log() { printf 'test-deps: %s\n' "$*" >&2; }
die() {
	printf 'test-deps: ERROR: %s\n' "$*" >&2
	exit 1
}

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# --- Debian packages ----------------------------------------------------------
# Each: the file that shows the package is there, and the package. Chromium runs
# the browser suite; yaz (yaz-marcdump) is the second opinion on MARC record counts;
# xmllint validates OAI-PMH against its XML schema; lighttpd serves Stacks as CGI
# and FastCGI in e2e/lighttpd_test.go; buildah (daemonless, run as root with vfs
# storage and chroot isolation) builds the Dockerfile's image in
# cmd/stacks/build_test.go.

need=()
for pair in "$CHROMIUM:chromium" "/usr/bin/yaz-marcdump:yaz" "/usr/bin/yaz-ztest:yaz" "/usr/bin/xmllint:libxml2-utils" "/usr/sbin/lighttpd:lighttpd" "/usr/bin/buildah:buildah"; do
	file=${pair%%:*} pkg=${pair##*:}
	if [[ -x $file ]]; then
		log "$pkg: $file present"
	else
		[[ " ${need[*]} " == *" $pkg "* ]] || need+=("$pkg")
	fi
done
if ((${#need[@]} > 0)); then
	log "installing Debian packages: ${need[*]} (about a minute)"
	SUDO=()
	if [[ $(id -u) -ne 0 ]]; then
		if command -v sudo >/dev/null 2>&1; then
			SUDO=(sudo)
		else
			die "not root and no sudo: install them by hand with 'apt-get update && apt-get install -y --no-install-recommends ${need[*]}', then run scripts/test-deps.sh again"
		fi
	fi
	command -v apt-get >/dev/null 2>&1 ||
		die "apt-get not found: this script expects Debian; install ${need[*]} (so that $CHROMIUM exists), then run scripts/test-deps.sh again"
	"${SUDO[@]}" apt-get update -qq ||
		die "apt-get update failed: check that the Debian mirrors are reachable, then run scripts/test-deps.sh again"
	DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" ||
		die "apt-get install ${need[*]} failed (see above); fix apt, then run scripts/test-deps.sh again"
	[[ -x $CHROMIUM ]] || die "chromium was installed but $CHROMIUM does not exist; the e2e tests launch exactly that path"
	# Where nothing forbids it (no policy-rc.d), Debian's package starts lighttpd
	# on port 80 of every interface. The tests need none of that: stop the
	# service it just started, and leave a machine's own lighttpd alone.
	if [[ " ${need[*]} " == *" lighttpd "* ]] && [[ -s /run/lighttpd.pid ]]; then
		log "stopping the lighttpd service the package started (the tests start their own, on loopback)"
		"${SUDO[@]}" invoke-rc.d lighttpd stop >/dev/null 2>&1 || log "could not stop it: stop lighttpd's service by hand if it should not run"
	fi
	log "installed: ${need[*]}"
fi

# --- Playwright driver ------------------------------------------------------

command -v go >/dev/null 2>&1 || die "go not found in PATH"
command -v node >/dev/null 2>&1 ||
	die "node not found: install Node.js (Debian: apt-get install -y nodejs npm), then run scripts/test-deps.sh again"

pw_dir=$(go list -m -f '{{.Dir}}' "$PW_MODULE" 2>/dev/null || true)
if [[ -z $pw_dir || ! -f $pw_dir/run.go ]]; then
	go mod download "$PW_MODULE" ||
		die "could not download $PW_MODULE: is it required in go.mod? (go get $PW_MODULE@<version>)"
	pw_dir=$(go list -m -f '{{.Dir}}' "$PW_MODULE")
fi
[[ -f $pw_dir/run.go ]] || die "$PW_MODULE has no run.go in $pw_dir; cannot tell which driver version it needs"

version=$(sed -n 's/^const playwrightCliVersion = "\([^"]*\)".*/\1/p' "$pw_dir/run.go")
[[ -n $version ]] || die "playwrightCliVersion not found in $pw_dir/run.go; has playwright-go changed how it pins the driver?"

driver_dir=${PLAYWRIGHT_DRIVER_PATH:-$HOME/.cache/ms-playwright-go/$version}

driver_ok() {
	[[ -x $driver_dir/node && -f $driver_dir/package/cli.js ]] || return 1
	local out
	out=$("$driver_dir/node" "$driver_dir/package/cli.js" --version 2>/dev/null) || return 1
	[[ $out == *"$version"* ]]
}

# npm_unpack PACKAGE@VERSION DIR unpacks the npm package into DIR/package.
# It unpacks beside the final place and swaps in, so an interrupted run never
# leaves a half-written package/ that looks installed.
npm_unpack() {
	local spec=$1 dir=$2 tmp tarball
	command -v npm >/dev/null 2>&1 ||
		die "npm not found: install it (Debian: apt-get install -y npm), then run scripts/test-deps.sh again"
	mkdir -p "$dir"
	tmp=$(mktemp -d "$dir/.assemble.XXXXXX")
	# shellcheck disable=SC2064 # expand $tmp now: it is local
	trap "rm -rf '$tmp'" EXIT
	tarball=$(cd "$tmp" && npm pack --silent "$spec" | tail -n 1) ||
		die "npm pack $spec failed: check that the npm registry is reachable (npm config get registry), then run scripts/test-deps.sh again"
	[[ -f $tmp/$tarball ]] || die "npm pack did not produce $tmp/$tarball"
	tar -xzf "$tmp/$tarball" -C "$tmp" || die "could not unpack $tarball"
	[[ -d $tmp/package ]] || die "$tarball has no package/ directory"
	rm -rf "$dir/package"
	mv "$tmp/package" "$dir/package"
	rm -rf "$tmp"
	trap - EXIT
}

if driver_ok; then
	log "playwright driver: $version present in $driver_dir"
else
	log "playwright driver: assembling $version in $driver_dir from npm playwright-core"
	npm_unpack "playwright-core@$version" "$driver_dir"
	[[ -f $driver_dir/package/cli.js ]] || die "playwright-core@$version has no package/cli.js; this script needs updating for that version"
	ln -sfn "$(command -v node)" "$driver_dir/node"
	driver_ok || die "driver assembled in $driver_dir but '$driver_dir/node $driver_dir/package/cli.js --version' does not print $version; check the Node.js version (node --version)"
	log "playwright driver: $version ready in $driver_dir"
fi

# --- axe-core -----------------------------------------------------------------
# The version is pinned in one place, the e2e helper that loads the file, so
# the script and the tests cannot disagree about where it is.

axe_version=$(sed -n 's/^const axeCoreVersion = "\([^"]*\)".*/\1/p' e2e/axe_test.go)
[[ -n $axe_version ]] || die "const axeCoreVersion not found in e2e/axe_test.go"
axe_dir=${XDG_CACHE_HOME:-$HOME/.cache}/stacks-test/axe-core-$axe_version
axe_file=$axe_dir/package/axe.min.js

if [[ -s $axe_file ]] && grep -q "axe v$axe_version" <(head -c 300 "$axe_file"); then
	log "axe-core: $axe_version present in $axe_dir"
else
	log "axe-core: unpacking $axe_version into $axe_dir from npm"
	npm_unpack "axe-core@$axe_version" "$axe_dir"
	[[ -s $axe_file ]] || die "axe-core@$axe_version has no package/axe.min.js; this script needs updating for that version"
	log "axe-core: $axe_version ready in $axe_dir"
fi
