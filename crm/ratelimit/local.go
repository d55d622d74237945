package ratelimit

import (
	"slices"
	"sync"
	"time"
)

// Local is one process's memory of the requests it was admitted, per key: a second, local sliding-window
// log checked before Redis. The zero value is ready to use; share one per process (see Config.Local).
type Local struct {
	mu   sync.Mutex
	logs map[string][]time.Time
}

// reserve takes a slot for key at now when fewer than limit of this process's admissions lie within span;
// otherwise it returns how long until the oldest of them leaves the span. Reserving before asking Redis
// keeps concurrent callers of one process from passing the local check together.
func (l *Local) reserve(key string, limit int, span time.Duration, now time.Time) (time.Time, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.logs == nil {
		l.logs = map[string][]time.Time{}
	}
	log := l.logs[key]
	keep := 0
	for keep < len(log) && !log[keep].After(now.Add(-span)) {
		keep++
	}
	log = log[keep:]
	if len(log) >= limit {
		l.logs[key] = log
		return time.Time{}, max(log[len(log)-limit].Add(span).Sub(now), time.Millisecond)
	}
	l.logs[key] = append(log, now)
	return now, 0
}

// release gives back a slot that Redis refused (or that failed), so it does not count.
func (l *Local) release(key string, slot time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	log := l.logs[key]
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Equal(slot) {
			l.logs[key] = append(log[:i], log[i+1:]...)
			return
		}
	}
}

// move shifts an admission from slot to at (its request went out then), keeping the log in time order.
// An admission already trimmed (held up longer than span) is put back when at still lies within span.
func (l *Local) move(key string, slot, at time.Time, span time.Duration, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	log := l.logs[key]
	i := slices.IndexFunc(log, slot.Equal)
	switch {
	case i >= 0 && at.After(slot):
		log[i] = at
	case i < 0 && at.After(now.Add(-span)):
		log = append(log, at)
	default:
		return
	}
	slices.SortFunc(log, func(a, b time.Time) int { return a.Compare(b) })
	if l.logs == nil {
		l.logs = map[string][]time.Time{}
	}
	l.logs[key] = log
}
