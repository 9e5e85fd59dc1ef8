# Stacks in a container: a static binary on an empty base image.
#
#   docker build -t stacks .
#   docker run -p 8080:8080 -p 8081:8081 -v stacks-data:/data stacks   # demo library (patrons' catalogue on 8081)
#   docker run -p 8080:8080 -v stacks-data:/data stacks serve    # your own library
#
# The build stage's commands are the ones cmd/stacks/build_test.go runs without
# Docker, so a green `make test` means this build works.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/stacks ./cmd/stacks \
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
ENV STACKS_DB=/data/stacks.db \
    STACKS_ADDR=:8080 \
    STACKS_HEALTH_URL=http://127.0.0.1:8080/healthz
VOLUME /data
EXPOSE 8080 8081
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s CMD ["/stacks", "healthcheck"]
ENTRYPOINT ["/stacks"]
CMD ["serve", "--demo"]
