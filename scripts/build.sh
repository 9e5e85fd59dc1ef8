#!/bin/sh
# build.sh OUT: the production binary, as `make build`, the container image and
# the tests make it: static (CGO_ENABLED=0, the image has no libc), without
# paths or symbols, with the release stamped in so that `stacks version` names
# it. There is no other build command: one binary, whoever builds it.
#
# build.sh --image DIR: what the Dockerfile's last stage copies into the
# container image, as it is (and the tests run as the image would):
#   DIR/root/stacks                      the binary, as above
#   DIR/root/etc/passwd, etc/group       the user stacks, 65532
#   DIR/root/etc/ssl/certs/ca-certificates.crt  this machine's CA bundle, for
#                                        SMTP over TLS and sslmode=verify-full
#   DIR/data                             the data volume's mount point, empty
#                                        (copied apart, to be owned by 65532)
# There is no /tmp: the image sets TMPDIR to /data, and stacks serve refuses
# to start, saying so, when its temporary directory is not writable.
#
# The release is STACKS_VERSION if set, else the VERSION file; inside a git
# checkout `git describe --tags --always --dirty` is added after a "+"
# (0.20.0+b9d6ec9-dirty), so a binary built from a changed tree says so. The
# container build has no .git (.dockerignore), so it says the VERSION file's
# release, or what `docker build --build-arg STACKS_VERSION=...` passes.
#
# BUILD_VERBOSE=1 lists each package as it is compiled (make run): the first
# build compiles SQLite's translated C and takes minutes, and says nothing
# otherwise.
set -eu
image=
if [ "${1:-}" = --image ]; then
	image=${2:?build.sh --image DIR}
	out=$image/root/stacks
else
	out=${1:-bin/stacks}
fi
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
case "$image" in "" | /*) ;; *) image="$PWD/$image" ;; esac
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
verbose=
if [ "${BUILD_VERBOSE:-}" = 1 ]; then
	verbose=-v
fi
CGO_ENABLED=0 ${GO:-go} build $verbose -trimpath -ldflags "-s -w -X main.version=$version" -o "$out" ./cmd/stacks
[ -n "$image" ] || exit 0

certs=/etc/ssl/certs/ca-certificates.crt
if [ ! -s "$certs" ]; then
	echo "build.sh: $certs missing: install ca-certificates (the image's CA bundle is copied from it)" >&2
	exit 1
fi
mkdir -p "$image/root/etc/ssl/certs" "$image/data"
cp "$certs" "$image/root/etc/ssl/certs/ca-certificates.crt"
echo 'stacks:x:65532:65532:stacks:/data:/sbin/nologin' >"$image/root/etc/passwd"
echo 'stacks:x:65532:' >"$image/root/etc/group"
