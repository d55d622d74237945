package ui

import (
	"net"
	"net/http"

	"github.com/go-chi/chi/v5/middleware"
)

// Budgets of failed sign-ins per 15 minutes, by what is counted. The pair (one client guessing one
// account) is the tight one; a client trying many accounts and an account tried from many clients get
// wider ones, so that one guesser never locks out everybody else behind the same address, nor the
// account's owner signing in from elsewhere.
const (
	SignInPairBudget    = 5
	SignInClientBudget  = 20
	SignInAccountBudget = 50
)

// SignInKinds are the LoginLimiter.KindMax of the sign-in throttle.
func SignInKinds() map[string]int {
	return map[string]int{"pair": SignInPairBudget, "client": SignInClientBudget, "account": SignInAccountBudget}
}

// signInKeys are the throttle keys of a sign-in attempt: the pair first (reset by a success), then the
// client, then the account.
func signInKeys(r *http.Request, email string) []string {
	ip := clientIP(r)
	return []string{"pair:" + ip + "|" + email, "client:" + ip, "account:" + email}
}

// clientIP is the client as the router saw it: the TCP peer, or the address a trusted proxy put in
// X-Forwarded-For (web.Routes decides which). Without either, the peer's host.
func clientIP(r *http.Request) string {
	if ip := middleware.GetClientIP(r.Context()); ip != "" {
		return ip
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
