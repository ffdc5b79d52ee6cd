# backbench as a container image: one static binary on an empty image (no
# shell, no libc), for the generators of a scale-out run (the Kubernetes Job
# in deploy/kubernetes). Build:  docker build -t backbench .
# Run:  docker run --rm --network host backbench bench -q --format json URL
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -ldflags=-s -o /out/backbench ./cmd/backbench

FROM scratch
# CA certificates for https targets.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /out/backbench /backbench
USER 65534:65534
ENTRYPOINT ["/backbench"]
