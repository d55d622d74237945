package alarm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/models"
)

// DefaultMaxTickGap is how late the scheduler's one-minute tick may be
// before the dead-man switch says ticks were missed.
const DefaultMaxTickGap = 3 * time.Minute

// Deadman is the scheduler's dead-man switch. Every minute Tick records the
// tick, raises an alert in every workspace when the previous tick is older
// than MaxGap (the scheduler or the workers were down or stuck), and pings
// each workspace's heartbeat URL, so that an external monitor alarms when
// the pings stop altogether.
type Deadman struct {
	Store  *models.Store
	Guards *alert.WorkspaceGuards // SSRF guard per workspace for the pings
	Log    *slog.Logger
	Now    func() time.Time
	MaxGap time.Duration
}

// Tick does one beat. A missed-ticks alert is keyed by the gap's start, so
// a retried task never alerts twice.
func (d *Deadman) Tick(ctx context.Context) error {
	now := d.now()
	prev, err := d.Store.HeartbeatTick(ctx, now)
	if err != nil {
		return err
	}
	var errs []error
	if gap := now.Sub(prev); !prev.IsZero() && gap > d.maxGap() {
		if err := d.alertGap(ctx, prev, now); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, d.ping(ctx))
	return errors.Join(errs...)
}

func (d *Deadman) alertGap(ctx context.Context, prev, now time.Time) error {
	wss, err := d.Store.WorkspaceList(ctx, false)
	if err != nil {
		return err
	}
	dedup := fmt.Sprintf("deadman:%d", prev.Unix())
	p := alert.Payload{Type: "deadman", Action: alert.ActionTrigger, Severity: alert.SeverityCritical, DedupKey: dedup,
		Title: "leadgate's scheduler missed its ticks",
		Text: fmt.Sprintf("No scheduler tick between %s and %s (%s; expected one a minute). Scheduled work (retries, alarms, sweeps) was not running: "+
			"check that a scheduler process is up and that workers are not saturated.", prev.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339),
			now.Sub(prev).Round(time.Second)),
		Details: map[string]any{"last_tick": prev.UTC().Format(time.RFC3339), "tick": now.UTC().Format(time.RFC3339)}}
	return d.Store.Tx(ctx, func(tx *models.Store) error {
		for _, ws := range wss {
			if _, err := alert.Enqueue(ctx, tx, ws.ID, nil, "alert:"+dedup, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// ping GETs every configured heartbeat URL through the workspace's guard.
func (d *Deadman) ping(ctx context.Context) error {
	urls, err := d.Store.GuardHeartbeatURLs(ctx)
	if err != nil {
		return err
	}
	var problems []string
	for ws, url := range urls {
		if err := d.pingOne(ctx, ws, url); err != nil {
			problems = append(problems, fmt.Sprintf("workspace %d: %v", ws, err))
		}
	}
	text := strings.Join(problems, "; ")
	if err := d.Store.HeartbeatPingResult(ctx, text); err != nil {
		return err
	}
	if text != "" {
		d.logger().Warn("heartbeat ping failed", "err", text)
	}
	return nil // a failed ping is the external monitor's business, not a task failure
}

func (d *Deadman) pingOne(ctx context.Context, workspaceID int64, url string) error {
	g, err := d.Guards.For(ctx, workspaceID)
	if err != nil {
		return err
	}
	if _, err := g.CheckURL(url); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "leadgate-heartbeat/1")
	resp, err := g.Client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

func (d *Deadman) maxGap() time.Duration {
	if d.MaxGap > 0 {
		return d.MaxGap
	}
	return DefaultMaxTickGap
}

func (d *Deadman) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Deadman) logger() *slog.Logger {
	if d.Log != nil {
		return d.Log
	}
	return slog.New(slog.DiscardHandler)
}
