// Package queued holds what leadgate's batching loops share (the group committer, the gate publisher,
// the enqueue pipeline): each takes the first item, waiting, then whatever else is already queued.
package queued

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
