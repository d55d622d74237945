// Package e2e drives the admin web app in a real headless Chromium (Debian's
// /usr/bin/chromium) against a full leadgate process: web, worker, Postgres
// and Redis. Its tests are plain `go test` tests; they skip only when no
// Chromium is installed. With LEADGATE_SCREENSHOTS=1 they also write the
// screenshots of the main pages to docs/screenshots/.
package e2e
