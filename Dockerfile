# Stacks in a container: a static binary on an empty base image.
#
#   docker build -t stacks .
#   docker run -p 8080:8080 -p 8081:8081 -v stacks-data:/data stacks   # demo library (patrons' catalogue on 8081)
#   docker run -p 8080:8080 -v stacks-data:/data stacks serve    # your own library
#
# The build stage runs scripts/build.sh, which cmd/stacks/build_test.go runs too
# (without Docker), so a green `make test` means this build works. The release
# stamped into the binary (`stacks version`) is the VERSION file's, or
#   docker build --build-arg STACKS_VERSION=$(git describe --tags --always --dirty) -t stacks .
#
# The image runs as user and group 65532 (stacks): a bind-mounted data folder
# must be owned by 65532 (docs/deploy.md, "Docker").

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG STACKS_VERSION=
RUN STACKS_VERSION="$STACKS_VERSION" sh scripts/build.sh /out/stacks \
 && mkdir -p /out/data /out/tmp \
 && echo 'stacks:x:65532:65532:stacks:/data:/sbin/nologin' > /out/passwd \
 && echo 'stacks:x:65532:' > /out/group

FROM scratch
COPY --from=build /out/passwd /etc/passwd
COPY --from=build /out/group /etc/group
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build --chmod=1777 /out/tmp /tmp
COPY --from=build /out/stacks /stacks
USER 65532:65532
# The health check asks http://127.0.0.1:8080/healthz, under STACKS_BASE_PATH
# when that is set (stacks healthcheck's default); STACKS_HEALTH_URL overrides it.
ENV STACKS_DB=/data/stacks.db \
    STACKS_ADDR=:8080
VOLUME /data
EXPOSE 8080 8081
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s CMD ["/stacks", "healthcheck"]
ENTRYPOINT ["/stacks"]
CMD ["serve", "--demo"]
