#!/bin/sh
# build.sh OUT: the production binary, as the container image and `make build`
# make it: static (CGO_ENABLED=0, the image has no libc), without paths or
# symbols, with the release stamped in so that `stacks version` names it.
#
# The release is STACKS_VERSION if set, else the VERSION file; inside a git
# checkout `git describe --tags --always --dirty` is added after a "+"
# (0.20.0+b9d6ec9-dirty), so a binary built from a changed tree says so. The
# container build has no .git (.dockerignore), so it says the VERSION file's
# release, or what `docker build --build-arg STACKS_VERSION=...` passes.
#
# cmd/stacks/build_test.go runs this same script, and the Dockerfile's build
# stage runs it, so a green test means the image's build step works.
set -eu
out=${1:-bin/stacks}
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
cd "$(dirname "$0")/.."
version=${STACKS_VERSION:-}
if [ -z "$version" ]; then
	version=$(cat VERSION)
	if rev=$(git describe --tags --always --dirty 2>/dev/null); then
		version="$version+$rev"
	fi
fi
case "$version" in
*[!A-Za-z0-9.+_-]*) echo "build.sh: version $version: only letters, digits and . + _ - please" >&2; exit 2 ;;
esac
CGO_ENABLED=0 exec ${GO:-go} build -trimpath -ldflags "-s -w -X main.version=$version" -o "$out" ./cmd/stacks
