package ratelimit

import (
	"slices"
	"sync"
	"time"
)

// Local is one process's memory of the requests it was admitted, per key: a second, local sliding-window
// log checked before Redis, with the same pending entries (see Limiter.Admit). The zero value is ready to
// use; share one per process (see Config.Local).
type Local struct {
	mu      sync.Mutex
	logs    map[string][]entry // sent requests by when they went out, in time order
	pending map[string][]entry // pending requests by when they were admitted, in time order
}

// entry is one admitted request: slot is its admission (its identity, in its Ticket), at when it counts.
type entry struct{ slot, at time.Time }

// localLimit is what a reservation is checked against.
type localLimit struct {
	limit    int
	span     time.Duration // window plus margin
	inFlight time.Duration // how long a pending entry counts at most, beyond span
	poll     time.Duration // the shortest wait on a pending entry
}

// reserve takes a slot for key at now when fewer than limit of this process's requests went out within
// span or are still pending; otherwise it returns how long until one of them can leave the span (see
// admitScript). Reserving before asking Redis keeps concurrent callers of one process from passing the
// local check together.
func (l *Local) reserve(key string, lim localLimit, pending bool, now time.Time) (time.Time, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.logs == nil {
		l.logs, l.pending = map[string][]entry{}, map[string][]entry{}
	}
	log := trimBefore(l.logs[key], now.Add(-lim.span))
	pend := trimBefore(l.pending[key], now.Add(-lim.span-lim.inFlight))
	l.logs[key], l.pending[key] = log, pend
	if n := len(log) + len(pend); n >= lim.limit {
		free := make([]time.Time, 0, n)
		for _, e := range log {
			free = append(free, e.at.Add(lim.span))
		}
		for _, e := range pend {
			free = append(free, later(e.at.Add(lim.span), now.Add(lim.poll)))
		}
		slices.SortFunc(free, time.Time.Compare)
		return time.Time{}, max(free[n-lim.limit].Sub(now), time.Millisecond)
	}
	if pending {
		l.pending[key] = append(pend, entry{now, now})
	} else {
		l.logs[key] = append(log, entry{now, now})
	}
	return now, 0
}

// release gives back a slot that Redis refused (or that failed), so it does not count.
func (l *Local) release(key string, slot time.Time, pending bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.logs
	if pending {
		m = l.pending
	}
	if i := slices.IndexFunc(m[key], slotOf(slot)); i >= 0 {
		m[key] = slices.Delete(m[key], i, i+1)
	}
}

// sent records that the request admitted at slot went out at at: a pending entry moves to the log at at
// (never earlier than its admission), an entry already in the log moves later only. An entry found in
// neither (its pending time ran out) is put back when at still lies within span.
func (l *Local) sent(key string, slot, at time.Time, span time.Duration, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.logs == nil {
		l.logs, l.pending = map[string][]entry{}, map[string][]entry{}
	}
	at = later(at, slot)
	if i := slices.IndexFunc(l.pending[key], slotOf(slot)); i >= 0 {
		l.pending[key] = slices.Delete(l.pending[key], i, i+1)
	} else if i := slices.IndexFunc(l.logs[key], slotOf(slot)); i >= 0 {
		if !at.After(l.logs[key][i].at) {
			return
		}
		l.logs[key] = slices.Delete(l.logs[key], i, i+1)
	} else if !at.After(now.Add(-span)) {
		return
	}
	log := append(l.logs[key], entry{slot, at})
	slices.SortFunc(log, func(a, b entry) int { return a.at.Compare(b.at) })
	l.logs[key] = log
}

func slotOf(slot time.Time) func(entry) bool {
	return func(e entry) bool { return e.slot.Equal(slot) }
}

// trimBefore drops the entries of a time-ordered log that count at or before cut.
func trimBefore(log []entry, cut time.Time) []entry {
	keep := 0
	for keep < len(log) && !log[keep].at.After(cut) {
		keep++
	}
	return log[keep:]
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
