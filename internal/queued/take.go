// Package queued holds what leadgate's batching loops share (the group committer, the gate publisher,
// the enqueue pipeline): each takes the first item, waiting, then whatever else is already queued or
// arrives within a short linger.
package queued

import "time"

// Take appends what is already waiting on ch to batch, up to max items, without waiting for more.
func Take[T any](ch <-chan T, batch []T, max int) []T {
	for len(batch) < max {
		select {
		case v := <-ch:
			batch = append(batch, v)
		default:
			return batch
		}
	}
	return batch
}

// TakeFor appends to batch what arrives on ch within d, up to max items; it returns early when the
// batch is full or stop is closed: a few milliseconds of wait turn many small round trips into one.
func TakeFor[T any](ch <-chan T, batch []T, max int, d time.Duration, stop <-chan struct{}) []T {
	batch = Take(ch, batch, max)
	if len(batch) >= max || d <= 0 {
		return batch
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for len(batch) < max {
		select {
		case v := <-ch:
			batch = Take(ch, append(batch, v), max)
		case <-timer.C:
			return batch
		case <-stop:
			return batch
		}
	}
	return batch
}
