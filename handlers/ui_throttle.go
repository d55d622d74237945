package handlers

import (
	"sync"
	"time"
)

// LoginLimiter counts failed sign-ins per key (a client IP, an email) in a
// sliding window and blocks a key once it reaches Max failures. It is
// in-memory and per process: a replica set multiplies the budget by its size,
// which still turns online guessing from millions of tries into a handful.
type LoginLimiter struct {
	Max    int           // failures allowed per Window [5]
	Window time.Duration // [15 min]

	mu       sync.Mutex
	failures map[string][]time.Time
}

// maxLimiterKeys bounds memory under a spray of distinct keys; beyond it the
// oldest-looking entries are dropped when they have expired.
const maxLimiterKeys = 50_000

// NewLoginLimiter allows max failures per key per window.
func NewLoginLimiter(max int, window time.Duration) *LoginLimiter {
	return &LoginLimiter{Max: max, Window: window, failures: map[string][]time.Time{}}
}

// Blocked reports whether any of keys has used up its failures at now, and
// how long until the first of them frees up.
func (l *LoginLimiter) Blocked(now time.Time, keys ...string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		recent := l.recent(k, now)
		if len(recent) >= l.Max {
			wait = max(wait, recent[len(recent)-l.Max].Add(l.Window).Sub(now))
		}
	}
	return wait > 0, wait
}

// Fail records one failed attempt for each key.
func (l *LoginLimiter) Fail(now time.Time, keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failures) >= maxLimiterKeys {
		for k := range l.failures {
			if len(l.recent(k, now)) == 0 {
				delete(l.failures, k)
			}
		}
	}
	for _, k := range keys {
		l.failures[k] = append(l.recent(k, now), now)
	}
}

// Reset forgets a key's failures (after a successful sign-in).
func (l *LoginLimiter) Reset(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		delete(l.failures, k)
	}
}

// recent prunes and returns k's failures inside the window; l.mu is held.
func (l *LoginLimiter) recent(k string, now time.Time) []time.Time {
	list := l.failures[k]
	i := 0
	for i < len(list) && now.Sub(list[i]) >= l.Window {
		i++
	}
	if i == len(list) {
		delete(l.failures, k)
		return nil
	}
	list = list[i:]
	l.failures[k] = list
	return list
}
