# retrieval-gate as a container: the image a release publishes (action.yml on a release
# tag runs it; action.yml on the default branch builds this file) and
# `docker run --rm -v "$PWD:/work" -w /work IMAGE check --cases … --kb …`.

# Build stage: CGO_ENABLED=0, no paths of this machine in the binary (-trimpath), no
# symbol table or DWARF (-s -w). It runs on the builder's own platform and cross-compiles
# for the target one (TARGETOS/TARGETARCH, set by `docker buildx build --platform`), so a
# multi-arch release builds arm64 without emulation; a plain `docker build` leaves them
# empty, which means the builder's platform.
#
# Base images are pinned by digest (issue 20 item 15): a tag can be moved to other
# content, a digest cannot. Update a pin together with its tag, and check it first:
#   docker buildx imagetools inspect golang:1.26.8-bookworm   (the index digest)
# This digest is the one two independent public Dockerfiles pin for this tag; it was
# not checked against the registry from the machine that wrote it (no registry
# access there): verify it with the command above before the next release.
FROM --platform=$BUILDPLATFORM golang:1.26.8-bookworm@sha256:a688600ca24f8a4d3ca77f95b0dd40704a9fc787c826660eb7ba0b641b8b175d AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG TARGETOS TARGETARCH
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags "-s -w -X github.com/retrieval-gate/retrieval-gate/internal/cli.Version=${VERSION}" -o /out/retrieval-gate .

# Final stage: distroless "static" (CA certificates, tzdata, /etc/passwd, /tmp; no libc,
# no shell, no package manager). The binary is fully static: CGO_ENABLED=0, and no
# dependency loads C libraries (the Chroma store speaks Chroma's REST API with its own
# small client, not chroma-go, whose v2 package links purego and thereby a dynamic
# libc). internal/cli/actions_e2e_test.go builds the binary with the RUN line above and
# checks that it is static and that this stage is distroless/static or scratch.
# Pinned by digest like the build stage. This is the static-debian12 (tag latest) index
# digest that two independent public Dockerfiles pin, cilium/ariane's and
# kucherenko/jscpd's (the latter picks amd64 or arm64 binaries by TARGETARCH on top
# of it, so it is meant as a multi-platform index, not one platform's manifest; a
# third public Dockerfile pins it too). It was NOT checked against the
# registry from the machine that wrote it (no registry access there), and it is one
# build of a tag that is rebuilt often: before the next release, verify it and move
# it to the current build with
#   docker buildx imagetools inspect gcr.io/distroless/static-debian12:latest
# No git in this image: calibrate's --lock-base and --git-anchoring read the
# repository with internal/gitread.
FROM gcr.io/distroless/static-debian12:latest@sha256:d75cdd72874d4790092fcb1b058493ecf6bb5bf2b2b897045b00ff01d91843f2
# The build stage's CA bundle, so HTTPS (GitHub API, Chroma, embedding servers) uses
# the same, current certificates whatever the base image's age.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/retrieval-gate /retrieval-gate
# No USER line on purpose: GitHub runs a Docker action as the image's user and mounts
# the workspace and the runner's files (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) owned by the
# runner, so the action must run as root to write them (GitHub's documentation advises
# against USER in action images). distroless/static runs as root by default. With plain
# `docker run`, pass `--user "$(id -u):$(id -g)"` to write reports as yourself.
ENTRYPOINT ["/retrieval-gate"]
