# retrieval-gate as a container: the GitHub Action (action.yml builds this file) and
# `docker run --rm -v "$PWD:/work" -w /work IMAGE check --cases … --kb …`.

# Build stage: CGO_ENABLED=0, no paths of this machine in the binary (-trimpath), no
# symbol table or DWARF (-s -w).
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/retrieval-gate/retrieval-gate/internal/cli.Version=${VERSION}" -o /out/retrieval-gate .

# Final stage: distroless "base" (glibc, libssl, CA certificates, tzdata, /tmp; no
# shell, no package manager), not scratch or distroless "static". The build uses no
# cgo, but the binary is NOT static: it is dynamically linked against glibc's
# libc/libdl/libpthread (no symbol versions, so any glibc works), because chroma-go,
# the Chroma client of `retrieve`, pulls in purego, which imports dlopen dynamically
# on Linux. On scratch it would not start. internal/cli/actions_e2e_test.go builds the binary
# with the RUN line above and checks its linkage against this final stage.
FROM gcr.io/distroless/base-debian12
# The build stage's CA bundle, so HTTPS (GitHub API, Chroma, embedding servers) uses
# the same, current certificates whatever the base image's age.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/retrieval-gate /retrieval-gate
# No USER line on purpose: GitHub runs a Docker action as the image's user and mounts
# the workspace and the runner's files (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) owned by the
# runner, so the action must run as root to write them (GitHub's documentation advises
# against USER in action images). distroless/base runs as root by default. With plain
# `docker run`, pass `--user "$(id -u):$(id -g)"` to write reports as yourself.
ENTRYPOINT ["/retrieval-gate"]
