# syntax=docker/dockerfile:1
# Build stage: a static leadgate binary.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/leadgate ./cmd/leadgate

# Run stage: distroless, non-root. The spool directory must be a volume so that
# events accepted while Postgres is down survive a container restart.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/leadgate /usr/local/bin/leadgate
USER nonroot:nonroot
WORKDIR /var/lib/leadgate
VOLUME ["/var/lib/leadgate"]
ENV LEADGATE_ADDR=:8080 LEADGATE_SPOOL_DIR=/var/lib/leadgate/spool
EXPOSE 8080
HEALTHCHECK NONE
ENTRYPOINT ["/usr/local/bin/leadgate"]
CMD ["serve"]
