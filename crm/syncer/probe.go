package syncer

import (
	"context"
	"log/slog"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/models"
)

// Kicker asks for a sync tick now, so that work a resume released drains at once.
type Kicker interface {
	Kick(ctx context.Context) error
}

// probeTimeout bounds one destination's check.
const probeTimeout = 20 * time.Second

// PauseProbe resumes destinations paused for a fault of their own once it is gone: refused credentials
// (auth, blocked) when a cheap authenticated read passes, a setup fault when the setup check finds nothing
// missing, a spent quota when its reset has passed. An operator's pause is never touched.
type PauseProbe struct {
	Store     *models.Store
	Connector *Connector
	Log       *slog.Logger
	Queue     Kicker // kicked after a resume so the held work drains at once (nil: the periodic tick drains it)
	Now       func() time.Time
}

// Run checks every destination the system paused; it returns how many it resumed.
func (p *PauseProbe) Run(ctx context.Context) (int, error) {
	list, err := p.Store.DestinationsPausedBySystem(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range list {
		if !p.faultGone(ctx, d) {
			continue
		}
		ok, err := ResumeSystemPause(ctx, p.Store, d.ID, "crm-sync", p.now())
		if err != nil {
			return n, err
		}
		if ok {
			n++
			p.Connector.Forget(d.ID)
			p.Log.Info("crm sync: destination resumed: its fault is gone", "destination", d.ID, "cause", d.PauseCause)
		}
	}
	if n > 0 && p.Queue != nil {
		if err := p.Queue.Kick(ctx); err != nil {
			p.Log.Debug("crm sync: kick after resume failed; the periodic tick drains it", "err", err)
		}
	}
	return n, nil
}

// faultGone checks one paused destination; a check that fails or cannot run leaves it paused.
func (p *PauseProbe) faultGone(ctx context.Context, d models.Destination) bool {
	if d.PausedUntil != nil && p.now().Before(*d.PausedUntil) {
		return false
	}
	if d.PauseCause == models.PauseQuota {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	conn, err := p.Connector.Connect(ctx, d)
	if err != nil {
		p.Log.Debug("crm sync: probe: connect", "destination", d.ID, "err", err)
		return false
	}
	if d.PauseCause == models.PauseSetup {
		rep, err := CheckDestinationSetup(ctx, conn.Dest)
		if err != nil || !rep.Complete() {
			p.Log.Debug("crm sync: probe: setup still incomplete", "destination", d.ID, "missing", len(rep.Missing), "err", err)
			return false
		}
		return true
	}
	if err := conn.Dest.TestConnection(ctx); err != nil {
		p.Log.Debug("crm sync: probe: still refused", "destination", d.ID, "class", crm.ClassOf(err).String(), "err", err)
		return false
	}
	return true
}

func (p *PauseProbe) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}
