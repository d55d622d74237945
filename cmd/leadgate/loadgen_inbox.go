package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
)

// inboxWatch reads leadgate's inbox (read-only) to see how far apply is behind: the events due and not
// yet applied, and how long the oldest of them has waited.
type inboxWatch struct{ conn *pgx.Conn }

func openInboxWatch(ctx context.Context, url string) (*inboxWatch, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("loadgen: --watch-db: %w", err)
	}
	return &inboxWatch{conn: conn}, nil
}

func (w *inboxWatch) Close() { _ = w.conn.Close(context.Background()) }

// dueUnresolved selects the events apply has yet to resolve and may take now.
const dueUnresolved = `status IN ('pending', 'waiting', 'retrying') AND (next_attempt_at IS NULL OR next_attempt_at <= now())`

// backlog is one look at the inbox.
type backlog struct {
	Pending int64         // unresolved events that are due
	Oldest  time.Duration // how long the oldest of them has waited since it was received
}

func (w *inboxWatch) sample(ctx context.Context) (backlog, error) {
	var b backlog
	var oldest float64
	err := w.conn.QueryRow(ctx, `SELECT count(*), coalesce(extract(epoch FROM clock_timestamp() - min(received_at)), 0)
		FROM events WHERE `+dueUnresolved).Scan(&b.Pending, &oldest)
	if err != nil {
		return b, fmt.Errorf("loadgen: read the inbox: %w", err)
	}
	b.Oldest = time.Duration(oldest * float64(time.Second))
	return b, nil
}

func (w *inboxWatch) resolved(ctx context.Context) (int64, error) {
	var n int64
	err := w.conn.QueryRow(ctx, `SELECT count(*) FROM events WHERE status NOT IN ('pending', 'waiting', 'retrying')`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("loadgen: read the inbox: %w", err)
	}
	return n, nil
}

// waitEmpty waits until nothing due is unresolved, at most limit; it reports whether the inbox emptied.
func (w *inboxWatch) waitEmpty(ctx context.Context, limit time.Duration) (bool, error) {
	deadline := time.Now().Add(limit)
	for {
		left, err := w.due(ctx)
		if err != nil || !left {
			return err == nil, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// due reports whether any event is due and unresolved. It stops at the first one, so it is cheap enough
// to ask several times a second during a drain, where counting the backlog is not.
func (w *inboxWatch) due(ctx context.Context) (bool, error) {
	var found bool
	err := w.conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE `+dueUnresolved+`)`).Scan(&found)
	if err != nil {
		return false, fmt.Errorf("loadgen: read the inbox: %w", err)
	}
	return found, nil
}

// watchDrain prints how many events apply resolved in each slice of time until nothing due is left
// (the drain of a backlog by `serve --role worker`), and the average. It looks for the end every poll,
// so the drain's time is when the inbox emptied, not the end of the slice it emptied in, and the last
// slice's rate is over the time it lasted.
func (w *inboxWatch) watchDrain(ctx context.Context, out io.Writer, slice, poll time.Duration) error {
	start, err := w.resolved(ctx)
	if err != nil {
		return err
	}
	b, err := w.sample(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "drain: %d events due, %d resolved before; per %s:\n", b.Pending, start, slice)
	began := time.Now()
	sliceBegan, prev, left := began, start, b.Pending > 0
	for left {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
		if left, err = w.due(ctx); err != nil {
			return err
		}
		ended := time.Now()
		if left && ended.Sub(sliceBegan) < slice {
			continue
		}
		n, err := w.resolved(ctx)
		if err != nil {
			return err
		}
		if b, err = w.sample(ctx); err != nil {
			return err
		}
		fmt.Fprintf(out, "  %6.1fs  %8.1f events/s  (%d left)\n", ended.Sub(began).Seconds(), float64(n-prev)/ended.Sub(sliceBegan).Seconds(), b.Pending)
		prev, sliceBegan = n, ended
	}
	took := sliceBegan.Sub(began)
	if took <= 0 {
		fmt.Fprintf(out, "drain: nothing was due\n")
		return nil
	}
	fmt.Fprintf(out, "drain: %d events in %.1fs, %.1f events/s\n", prev-start, took.Seconds(), float64(prev-start)/took.Seconds())
	return nil
}
