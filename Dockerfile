# Stacks in a container: a static binary on an empty base image.
#
#   docker build -t stacks .          (or: buildah bud -t stacks .; podman build -t stacks .)
#   docker run -p 8080:8080 -p 8081:8081 -v stacks-data:/data stacks   # demo library (patrons' catalogue on 8081)
#   docker run -it -v stacks-data:/data stacks init --branch CEN --branch-name "Central Library"   # your own library,
#   docker run -p 8080:8080 -v stacks-data:/data stacks serve                                      # then serve it
#
# The build stage runs scripts/build.sh --image, the one build command (make
# build and the tests run it too), which lays out the image's files in /image:
# the binary, the user, the CA certificates (SMTP over TLS, PostgreSQL's
# sslmode=verify-full) and the data directory. The tests
# (cmd/stacks/build_test.go) build this file's last stage with buildah from the
# same layout and run it as its user on a read-only root. The release stamped
# into the binary (`stacks version`) is the VERSION file's, or
#   docker build --build-arg STACKS_VERSION=$(git describe --tags --always --dirty) -t stacks .
#
# The image runs as user and group 65532 (stacks), and works on a read-only
# root filesystem (docker run --read-only): it writes only to /data. A
# bind-mounted data folder must be owned by 65532 (docs/deploy.md, "Docker").
# There is no /tmp: TMPDIR is /data, where SQLite puts the temporary files of
# large sorts (with no writable temporary directory they fail as "disk I/O
# error (6410)"; stacks serve checks it at start and says so).

FROM docker.io/library/golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG STACKS_VERSION=
RUN STACKS_VERSION="$STACKS_VERSION" sh scripts/build.sh --image /image

FROM scratch
COPY --from=build /image/root/ /
COPY --from=build --chown=65532:65532 /image/data /data
USER 65532:65532
# stacks healthcheck asks /healthz on STACKS_ADDR's port on this host, under
# STACKS_BASE_PATH when that is set; STACKS_HEALTH_URL overrides it.
ENV STACKS_DB=/data/stacks.db \
    STACKS_ADDR=:8080 \
    TMPDIR=/data
VOLUME /data
EXPOSE 8080 8081
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s CMD ["/stacks", "healthcheck"]
ENTRYPOINT ["/stacks"]
CMD ["serve", "--demo"]
