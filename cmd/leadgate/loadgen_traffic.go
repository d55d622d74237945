package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leadgate/leadgate/ingest/signature"
)

// outgoing is one signed delivery ready to post.
type outgoing struct {
	url    string
	header http.Header
	body   []byte
	dup    bool // repeats an earlier delivery
}

// lead is a unique delivery loadgen may repeat later.
type lead struct {
	id   string
	body []byte
}

// recentLeads is how many past deliveries a duplicate is drawn from.
const recentLeads = 1024

// traffic makes loadgen's deliveries: unique leads, and with DupRatio a
// repeat of a recent one (same delivery id and body, signed afresh like a
// sender's retry).
type traffic struct {
	cfg       loadgenConfig
	run       string // distinguishes runs, so a second run's leads are new too
	phoneBase int64  // offsets a run's phone numbers
	seq       atomic.Int64

	mu     sync.Mutex
	recent []lead
}

func newTraffic(cfg loadgenConfig) (*traffic, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("loadgen: run id: %w", err)
	}
	t := &traffic{cfg: cfg, run: hex.EncodeToString(b[:]), phoneBase: int64(b[0])<<8 | int64(b[1]), recent: make([]lead, 0, recentLeads)}
	if _, err := t.sign(lead{id: "probe", body: t.body(0)}, false); err != nil {
		return nil, fmt.Errorf("loadgen: --secret cannot sign %s deliveries: %w", cfg.Kind, err)
	}
	return t, nil
}

// next returns the next delivery, signed now. Signing cannot fail once
// newTraffic's probe succeeded: the kind and secret do not change.
func (t *traffic) next() outgoing {
	l, dup := t.repeat()
	if !dup {
		n := t.seq.Add(1)
		l = lead{id: fmt.Sprintf("lg_%s_%d", t.run, n), body: t.body(n)}
		t.remember(l)
	}
	out, _ := t.sign(l, dup)
	return out
}

// repeat picks a recent delivery with probability DupRatio.
func (t *traffic) repeat() (lead, bool) {
	if t.cfg.DupRatio == 0 || mrand.Float64() >= t.cfg.DupRatio {
		return lead{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.recent) == 0 {
		return lead{}, false
	}
	return t.recent[mrand.IntN(len(t.recent))], true
}

func (t *traffic) remember(l lead) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.recent) < recentLeads {
		t.recent = append(t.recent, l)
		return
	}
	t.recent[mrand.IntN(recentLeads)] = l
}

// body is CONTRACT.md's generic lead payload for lead n. The hmac kind finds
// its delivery id in event_id; the token kind has none, so it is
// deduplicated by content.
func (t *traffic) body(n int64) []byte {
	id := ""
	if t.cfg.Kind == signature.KindHMAC {
		id = fmt.Sprintf(`"event_id":"lg_%s_%d",`, t.run, n)
	}
	return fmt.Appendf(nil, `{%s"event_type":"form_submitted","occurred_at":%q,"email":"lead-%s-%d@loadgen.example",`+
		`"phone":%q,"first_name":"load","last_name":"generator","company":"Loadgen Inc",`+
		`"fields":{"seq":%d},"attribution":{"utm_source":"loadgen"}}`,
		id, time.Now().UTC().Format(time.RFC3339), t.run, n, t.phone(n), n)
}

// phone is lead n's own number: two leads with different emails sharing a
// phone would be an identity conflict downstream, not the load being measured.
// Numbers are unique within a run (up to 7.2M leads) and offset per run.
func (t *traffic) phone(n int64) string {
	exchange := 200 + (t.phoneBase+n/10000)%720 // 200-919
	return fmt.Sprintf("(415) %03d-%04d", exchange, n%10000)
}

// sign makes l an authentic delivery for the configured kind.
func (t *traffic) sign(l lead, dup bool) (outgoing, error) {
	req := signature.Request{
		Method: http.MethodPost,
		URL:    t.cfg.URL,
		Header: http.Header{"Content-Type": {"application/json"}, "User-Agent": {"leadgate-loadgen"}},
		Body:   l.body,
	}
	sc := signature.SignConfig{Secret: t.cfg.Secret, DeliveryID: l.id}
	if t.cfg.Secret != "" || t.cfg.Kind != signature.KindToken {
		if err := signature.Sign(t.cfg.Kind, sc, &req, time.Now()); err != nil {
			return outgoing{}, err
		}
	}
	return outgoing{url: req.URL, header: req.Header, body: req.Body, dup: dup}, nil
}
