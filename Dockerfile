# Build with the same command as `make build`: a static, stripped,
# version-stamped binary.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# Set by buildx/podman for each --platform: `make docker-buildx` runs this
# stage on the builder's platform and cross-compiles (empty: the host's).
ARG TARGETOS TARGETARCH
RUN GOOS=${TARGETOS} GOARCH=${TARGETARCH} make build BIN=/out VERSION=${VERSION}

# distroless/static: no shell, no package manager; runs as uid 65532.
FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/operator /operator
USER 65532:65532
ENTRYPOINT ["/operator"]
