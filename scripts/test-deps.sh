#!/usr/bin/env bash
# test-deps.sh installs what the browser tests need, without any browser or
# driver download from a CDN:
#
#   - Debian's Chromium at /usr/bin/chromium and yaz (yaz-marcdump, the second
#     opinion the MARC tests compare with), only if they are missing;
#   - the Playwright driver that playwright-go pins, assembled from the npm
#     package playwright-core into ${PLAYWRIGHT_DRIVER_PATH:-~/.cache/ms-playwright-go/<version>}.
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
# the browser suite; yaz (yaz-marcdump) is the second opinion on MARC record counts.

need=()
for pair in "$CHROMIUM:chromium" "/usr/bin/yaz-marcdump:yaz"; do
	file=${pair%%:*} pkg=${pair##*:}
	if [[ -x $file ]]; then
		log "$pkg: $file present"
	else
		need+=("$pkg")
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

if driver_ok; then
	log "playwright driver: $version present in $driver_dir"
	exit 0
fi

log "playwright driver: assembling $version in $driver_dir from npm playwright-core"
command -v npm >/dev/null 2>&1 ||
	die "npm not found: install it (Debian: apt-get install -y npm), then run scripts/test-deps.sh again"
mkdir -p "$driver_dir"

# Unpack beside the final place and swap in, so an interrupted run never
# leaves a half-written package/ that looks installed.
tmp=$(mktemp -d "$driver_dir/.assemble.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tarball=$(cd "$tmp" && npm pack --silent "playwright-core@$version" | tail -n 1) ||
	die "npm pack playwright-core@$version failed: check that the npm registry is reachable (npm config get registry), then run scripts/test-deps.sh again"
[[ -f $tmp/$tarball ]] || die "npm pack did not produce $tmp/$tarball"
tar -xzf "$tmp/$tarball" -C "$tmp" || die "could not unpack $tarball"
[[ -f $tmp/package/cli.js ]] || die "playwright-core@$version has no package/cli.js; this script needs updating for that version"

rm -rf "$driver_dir/package"
mv "$tmp/package" "$driver_dir/package"
ln -sfn "$(command -v node)" "$driver_dir/node"

driver_ok || die "driver assembled in $driver_dir but '$driver_dir/node $driver_dir/package/cli.js --version' does not print $version; check the Node.js version (node --version)"
log "playwright driver: $version ready in $driver_dir"
