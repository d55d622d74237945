// Package testkit holds the helpers every leadgate test package shares:
// a fresh Postgres database or Redis DB number per test on the machine's
// servers, throwaway Postgres clusters and Redis servers that a test may
// stop and restart, a TCP proxy to cut connections, and polling helpers
// so that tests never sleep blindly.
//
// Every helper registers its teardown with t.Cleanup and fails the test
// with a clear message when the service it needs is missing.
package testkit
