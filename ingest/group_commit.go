package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leadgate/leadgate/internal/queued"
	"github.com/leadgate/leadgate/models"
)

// GroupCommit stores the single-event deliveries of concurrent requests together: while one group's
// statement runs, the deliveries arriving meanwhile queue up and go out as the next group, when that
// statement is done, has run for Stagger, or FullGroup of them wait. Under load one statement and one commit (one WAL flush) then
// serve tens of senders instead of one each; at a lower rate a group waits at most Linger to fill.
type GroupCommit struct {
	Store *models.Store
	Log   *slog.Logger
	// MaxGroup caps a group's size (default 64).
	MaxGroup int
	// Committers is how many groups may be in flight at once (default 4), so that one slow commit does
	// not hold every sender.
	Committers int
	// Stagger is how long a group's statement runs before the next group may start beside it (default
	// 20 ms). Until then, or until FullGroup wait, the deliveries arriving meanwhile wait and leave
	// together: measured on two cores, groups cut as soon as any committer was free were about two
	// deliveries each, and Postgres spent 30 % more CPU per delivery on their statements than with one
	// group at a time.
	Stagger time.Duration
	// FullGroup is how many waiting deliveries make the next group worth starting beside the statement
	// in flight before the stagger is up (default MaxGroup/2). Without it a group's statement, not the
	// cores, bounds the rate under load: measured at max rate on two cores, statements ran one at a time
	// and back to back for over 90 % of the run while the machine was 14 % idle.
	FullGroup int
	// Linger is how long a group smaller than MinGroup waits for more deliveries before its statement
	// runs (default 2 ms; MinGroup defaults to 8). Each statement and commit has a fixed cost: measured
	// at 2,000 deliveries/s, groups grew from about 3 to 8 deliveries with the linger and Postgres's CPU
	// per delivery fell by a quarter. Under load a group is past MinGroup when it is taken and waits
	// for nothing. The linger counts from the oldest delivery's arrival: one that already waited
	// behind the statement in flight has lingered, and does not wait again.
	Linger   time.Duration
	MinGroup int
	// Sizes observes each group's size, Times how long its statement took (nil: not observed).
	Sizes, Times prometheus.Observer
	// Timeout bounds one group's statements (default 2 s); a sender that gives up earlier does not
	// cancel the group for the others. A group past it counts as Postgres being away: its deliveries are
	// spooled, and so are the next ones until Postgres answers a probe again.
	Timeout time.Duration
	// Now reads the clock the linger counts on (nil: time.Now).
	Now func() time.Time

	once sync.Once
	reqs chan groupRequest
	turn chan struct{} // the committer holding it collects the next group
	full chan struct{} // a sender saw FullGroup deliveries waiting
	stop context.CancelFunc
	wg   sync.WaitGroup
}

type groupRequest struct {
	item     models.IngestItem
	queuedAt time.Time
	done     chan groupAnswer // buffered: a committer never blocks on a sender that left
}

type groupAnswer struct {
	res  models.IngestResult
	item models.IngestItem // with the idempotency key the store set
	err  error
}

// errGroupClosed answers the deliveries of a stopped process.
var errGroupClosed = errors.New("ingest: group commit stopped")

// start launches the committers on first use, so that every holder of a Service (the server, tests,
// tools) gets working group commit without a separate lifecycle; Close stops them.
func (g *GroupCommit) start() {
	g.once.Do(func() {
		if g.MaxGroup <= 0 {
			g.MaxGroup = 64
		}
		if g.Committers <= 0 {
			g.Committers = 4
		}
		if g.Timeout <= 0 {
			g.Timeout = 2 * time.Second
		}
		if g.Stagger <= 0 {
			g.Stagger = 20 * time.Millisecond
		}
		if g.Linger <= 0 {
			g.Linger = 2 * time.Millisecond
		}
		if g.MinGroup <= 0 {
			g.MinGroup = 8
		}
		if g.Now == nil {
			g.Now = time.Now
		}
		if g.FullGroup <= 0 {
			g.FullGroup = max(g.MaxGroup/2, 1)
		}
		g.full = make(chan struct{}, 1)
		g.reqs = make(chan groupRequest, g.MaxGroup*g.Committers)
		g.turn = make(chan struct{}, 1)
		g.turn <- struct{}{}
		ctx, cancel := context.WithCancel(context.Background())
		g.stop = cancel
		for range g.Committers {
			g.wg.Add(1)
			go func() {
				defer g.wg.Done()
				g.commitLoop(ctx)
			}()
		}
	})
}

// Close stops the committers after the group in flight; deliveries queued after that are answered
// with an error (the HTTP server is shut down first, so there are none in normal operation).
func (g *GroupCommit) Close() {
	g.start()
	g.stop()
	g.wg.Wait()
	g.drainClosed()
}

// Commit queues one item and waits for its group to commit. A request whose context ends first returns
// its context's error; the item may still be committed, which a retry then finds as a duplicate.
func (g *GroupCommit) Commit(ctx context.Context, item models.IngestItem) (models.IngestResult, models.IngestItem, error) {
	g.start()
	req := groupRequest{item: item, queuedAt: g.Now(), done: make(chan groupAnswer, 1)}
	select {
	case g.reqs <- req:
	case <-ctx.Done():
		return models.IngestResult{}, item, ctx.Err()
	}
	if len(g.reqs) >= g.FullGroup {
		select {
		case g.full <- struct{}{}:
		default:
		}
	}
	select {
	case a := <-req.done:
		return a.res, a.item, a.err
	case <-ctx.Done():
		return models.IngestResult{}, item, ctx.Err()
	}
}

// commitLoop collects a group while it holds the turn and keeps the turn until its statement is done, has
// run for Stagger, or FullGroup deliveries wait, whichever comes first; then the next free committer
// collects the next group.
func (g *GroupCommit) commitLoop(ctx context.Context) {
	group := make([]groupRequest, 0, g.MaxGroup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.turn:
		}
		group = group[:0]
		select {
		case <-ctx.Done():
			g.turn <- struct{}{}
			return
		case r := <-g.reqs:
			group = append(group, r)
		}
		linger := g.Linger - g.Now().Sub(group[0].queuedAt)
		group = queued.TakeFor(g.reqs, group, min(g.MinGroup, g.MaxGroup), linger, ctx.Done())
		group = queued.Take(g.reqs, group, g.MaxGroup)
		var pass sync.Once
		passTurn := func() { pass.Do(func() { g.turn <- struct{}{} }) }
		slow := time.AfterFunc(g.Stagger, passTurn)
		select { // a full queue seen before this group was taken is this group
		case <-g.full:
		default:
		}
		done := make(chan struct{})
		go func() {
			select {
			case <-g.full:
				passTurn()
			case <-done:
			}
		}()
		g.commit(ctx, group)
		close(done)
		slow.Stop()
		passTurn()
	}
}

// commit stores one group. When the group statement fails for a reason other than Postgres being
// unreachable (say, one item the database refuses), each item is stored on its own so that one bad
// delivery cannot fail the others.
func (g *GroupCommit) commit(ctx context.Context, group []groupRequest) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.Timeout)
	defer cancel()
	items := make([]models.IngestItem, len(group))
	for i, r := range group {
		items[i] = r.item
	}
	if g.Sizes != nil {
		g.Sizes.Observe(float64(len(group)))
	}
	began := time.Now()
	results, err := g.Store.IngestStoreGroup(cctx, items)
	took := time.Since(began)
	if g.Times != nil {
		g.Times.Observe(took.Seconds())
	}
	if took > g.Timeout/4 && g.Log != nil {
		g.Log.Warn("ingest: slow group statement", "size", len(group), "took", took.Round(time.Millisecond), "err", err)
	}
	if err == nil {
		for i, r := range group {
			r.done <- groupAnswer{res: results[i], item: items[i]}
		}
		return
	}
	fallback := errors.Is(err, models.ErrGroupUnencodable) || (!models.IsUnavailable(err) && len(group) > 1)
	if !fallback {
		for i, r := range group {
			r.done <- groupAnswer{item: items[i], err: err}
		}
		return
	}
	if g.Log != nil {
		g.Log.Warn("ingest: group commit failed; storing its deliveries one by one", "size", len(group), "err", err)
	}
	for _, r := range group {
		one := []models.IngestItem{r.item}
		res, err := g.Store.IngestStore(cctx, one, 0)
		if err != nil {
			r.done <- groupAnswer{item: one[0], err: err}
			continue
		}
		r.done <- groupAnswer{res: res[0], item: one[0]}
	}
}

// drainClosed answers whatever is still queued when the process stops.
func (g *GroupCommit) drainClosed() {
	for {
		select {
		case r := <-g.reqs:
			r.done <- groupAnswer{item: r.item, err: fmt.Errorf("%w", errGroupClosed)}
		default:
			return
		}
	}
}
