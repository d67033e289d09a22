# syntax=docker/dockerfile:1
#
# The gateway as a static binary on distroless: no shell, no package
# manager, a non-root user, CA certificates for TLS to backends.
#
#   docker build --build-arg VERSION="$(git describe --tags --always --dirty)" \
#     --build-arg COMMIT="$(git rev-parse HEAD)" -t grpc-mcp-gateway .
#   # Serving: clients need a bearer token from the mounted file.
#   docker run --rm -p 8080:8080 -v "$PWD/tokens:/etc/grpc-mcp-gateway/tokens:ro" \
#     grpc-mcp-gateway --listen 0.0.0.0:8080 --bearer-tokens-file /etc/grpc-mcp-gateway/tokens \
#     --backend zoo.internal:50051
#   # Trying the bundled demo backend from this machine only: publish on
#   # the host's loopback, and say that no token is wanted.
#   docker run --rm -p 127.0.0.1:8080:8080 grpc-mcp-gateway --listen 0.0.0.0:8080 --allow-unauthenticated
#
# The CMD listens on 0.0.0.0:8080 (the gateway's default, 127.0.0.1:8080,
# is unreachable from outside the container) and therefore requires bearer
# tokens, read from /etc/grpc-mcp-gateway/tokens: the gateway refuses to
# start on an address others can reach without authentication (exit 2).
# Arguments after the image name replace CMD, so repeat --listen
# 0.0.0.0:8080 and the authentication when you pass any.
#
# Health: distroless has no shell or curl, so the gateway probes itself
# (--probe URL exits 0 on a 2xx answer). HEALTHCHECK assumes port 8080; on
# Kubernetes, which ignores HEALTHCHECK, use httpGet probes on /healthz
# (liveness) and /readyz (readiness): see examples/kubernetes/.

# The builder runs on the build machine's platform and cross-compiles,
# which is fast and needs no emulation for multi-platform images.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
# Modules first: this layer is reused until go.mod or go.sum changes.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
# The build context has no .git (or should not), so the commit cannot be
# read from VCS stamping: pass it; --version prints it.
ARG COMMIT=unknown
# grpcnotrace leaves out grpc's golang.org/x/net/trace (its /debug/requests
# pages, which the gateway never serves): its html/template reaches
# reflect's method lookup, which keeps the linker from dropping any
# exported method of any type. Without it the binary is 40 MB instead of
# 29 MB and 2 MiB more of it is resident (docs/performance.md, "Goals").
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -tags grpcnotrace -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o /out/gateway ./cmd/gateway

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gateway /gateway
# Numeric, so Kubernetes' runAsNonRoot can verify it (a user name cannot
# be checked without reading the image's /etc/passwd).
USER 65532:65532
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/gateway", "--probe", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/gateway"]
CMD ["--listen", "0.0.0.0:8080", "--bearer-tokens-file", "/etc/grpc-mcp-gateway/tokens"]
