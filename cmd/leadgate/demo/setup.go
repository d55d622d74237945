// Package demo builds a living demo workspace — sources for five kinds of
// lead source, the default stage rules, a flaky sandbox CRM and a silence
// alarm — and streams realistic signed traffic into it, so every dashboard,
// the dead-letter queue and the alarms have something to show in minutes.
package demo

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// Slug is the demo workspace.
const Slug = "demo"

// Source is a demo source with what a sender needs to reach it.
type Source struct {
	ID     int64
	Name   string
	Kind   string
	URL    string
	Secret string
	Config signature.Config
}

// Env is the demo workspace, ready for traffic.
type Env struct {
	Workspace models.Workspace
	Sources   map[string]Source // by role: form, typeform, facebook, voice, email, crm
}

// sourceSpec describes one demo source.
type sourceSpec struct {
	role, name, kind, channel string
	config                    models.SourceConfig
}

func specs() []sourceSpec {
	return []sourceSpec{
		{"form", "Website form", "standard-webhooks", "web_form", models.SourceConfig{DefaultRegion: "US"}},
		{"typeform", "Typeform: book a demo", "typeform", "web_form", models.SourceConfig{DefaultRegion: "US"}},
		{"facebook", "Facebook Lead Ads", "facebook-leads", "paid_social", models.SourceConfig{DefaultRegion: "US", VerifyToken: "demo-verify-token"}},
		{"voice", "AI voice agent (Retell)", "retell", "voice", models.SourceConfig{DefaultRegion: "US", VerifiesPhone: true}},
		{"email", "Cold email (Instantly)", "instantly", "cold_email", models.SourceConfig{DefaultRegion: "US"}},
		{"crm", "CRM webhooks (ActiveCampaign)", "activecampaign", "crm", models.SourceConfig{DefaultRegion: "US"}},
	}
}

// Rules are the demo's stage rules: the defaults plus the event types its sources send.
func Rules() lifecycle.Rules {
	r := lifecycle.DefaultRules()
	r.EventStages = map[string]string{
		"form_submitted": "Discovered", "form_response": "Discovered", "leadgen": "Discovered",
		"reply_received": "Engaged", "lead_interested": "Engaged",
		"call_analyzed": "SQL", "purchase": "Closed", "lost": "Lost",
	}
	r.Aliases = map[string]string{"SQL_VOICE_QUALIFIED": "SQL", "closed_won": "Closed"}
	r.SideEffects = []lifecycle.SideEffectRule{
		{On: "created", Action: "start_onboarding"},
		{On: "enter:Engaged", Action: "nurture"},
		{On: "enter:SQL", Action: "sales_task"},
	}
	r.Score = lifecycle.ScoreRules{EventPoints: map[string]int{"form_submitted": 10, "form_response": 10, "reply_received": 15, "call_analyzed": 30, "purchase": 50}}
	return r
}

// Setup creates (or finds) the demo workspace and everything in it.
type Setup struct {
	Store     *models.Store
	Box       *secretbox.Box
	PublicURL string
	// GraphURL is the fake Meta Graph API that hydrates Facebook leads.
	GraphURL string
	// AlarmThreshold is the voice agent's silence threshold (default 2 minutes).
	AlarmThreshold time.Duration
}

// Ensure is idempotent: a second run reuses the workspace and its sources.
func (s Setup) Ensure(ctx context.Context) (Env, error) {
	env := Env{Sources: map[string]Source{}}
	ws, err := s.Store.WorkspaceBySlug(ctx, Slug)
	if errors.Is(err, models.ErrNotFound) {
		ws, err = s.Store.WorkspaceCreate(ctx, Slug, "Demo: Northwind Agency client")
	}
	if err != nil {
		return env, fmt.Errorf("demo: workspace: %w", err)
	}
	env.Workspace = ws
	existing, err := s.Store.SourceList(ctx, ws.ID)
	if err != nil {
		return env, err
	}
	byName := map[string]models.Source{}
	for _, src := range existing {
		byName[src.Name] = src
	}
	for _, sp := range specs() {
		src, ok := byName[sp.name]
		if !ok {
			if src, err = s.createSource(ctx, ws.ID, sp); err != nil {
				return env, err
			}
		}
		secret, err := s.Box.Open(src.SecretEnc)
		if err != nil {
			return env, fmt.Errorf("demo: source %s secret: %w", src.Name, err)
		}
		env.Sources[sp.role] = Source{ID: src.ID, Name: src.Name, Kind: src.Kind, URL: s.PublicURL + "/hooks/" + src.Token, Secret: secret,
			Config: signature.Config{Secrets: []string{secret}, VerifyToken: src.Config.VerifyToken}}
	}
	if err := s.ensureRules(ctx, ws.ID); err != nil {
		return env, err
	}
	if err := s.ensureDestination(ctx, ws.ID); err != nil {
		return env, err
	}
	if err := s.ensureAlarm(ctx, ws.ID, env.Sources["voice"].ID); err != nil {
		return env, err
	}
	return env, s.ensureHydration(ctx, ws.ID)
}

func (s Setup) createSource(ctx context.Context, wsID int64, sp sourceSpec) (models.Source, error) {
	secret, err := newSecret(sp.kind)
	if err != nil {
		return models.Source{}, err
	}
	sealed, err := s.Box.Seal(secret)
	if err != nil {
		return models.Source{}, err
	}
	src := models.Source{WorkspaceID: wsID, Name: sp.name, Kind: sp.kind, Channel: sp.channel, SecretEnc: sealed, Config: sp.config}
	err = s.Store.Tx(ctx, func(tx *models.Store) error {
		if err := tx.SourceCreate(ctx, &src); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: wsID, Actor: "demo", Action: "source.create", SubjectType: "source",
			SubjectID: fmt.Sprint(src.ID), After: map[string]string{"name": src.Name, "kind": src.Kind}})
	})
	return src, err
}

// newSecret mints a secret the way the provider would hand one out.
func newSecret(kind string) (string, error) {
	if signature.GeneratesSecret(kind) {
		return signature.NewSecret(kind)
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "demo_" + base64.RawURLEncoding.EncodeToString(b), nil
}

func (s Setup) ensureRules(ctx context.Context, wsID int64) error {
	if _, err := s.Store.StageRulesCurrent(ctx, wsID); err == nil {
		return nil
	}
	_, err := s.Store.StageRulesSave(ctx, wsID, func(version int) (json.RawMessage, error) {
		r := Rules()
		r.Version = version
		return json.Marshal(r)
	}, "demo")
	return err
}

// ensureDestination gives the workspace a sandbox CRM that now and then
// answers 429 and 503, so retries, backoff and pauses show up.
func (s Setup) ensureDestination(ctx context.Context, wsID int64) error {
	list, err := s.Store.DestinationList(ctx, wsID)
	if err != nil {
		return err
	}
	if len(list) > 0 {
		return nil
	}
	d := models.Destination{WorkspaceID: wsID, Name: "Sandbox CRM (flaky)", Kind: "sandbox", RateLimitRPS: 10, BatchSize: 20, Enabled: true,
		Config: models.DestinationConfig{SandboxRateLimit: 8, Fail429Rate: 0.05, Fail503Rate: 0.03, LatencyMS: 40, MaxWritesPerHour: 20000}}
	return s.Store.DestinationCreate(ctx, &d)
}

// ensureAlarm watches the voice agent: the demo goes quiet on it for a while.
func (s Setup) ensureAlarm(ctx context.Context, wsID, voiceID int64) error {
	list, err := s.Store.SilenceAlarmList(ctx, wsID)
	if err != nil {
		return err
	}
	if len(list) > 0 {
		return nil
	}
	always, _ := json.Marshal(alarm.BusinessHours{})
	threshold := 120
	if s.AlarmThreshold > 0 {
		threshold = max(1, int(s.AlarmThreshold/time.Second))
	}
	return s.Store.SilenceAlarmCreate(ctx, &models.SilenceAlarm{WorkspaceID: wsID, SourceID: &voiceID, Metric: "apply",
		ThresholdSeconds: threshold, ReminderSeconds: 600, BusinessHours: always, Enabled: true})
}

// ensureHydration points the workspace's Meta credentials at the demo's fake Graph API.
func (s Setup) ensureHydration(ctx context.Context, wsID int64) error {
	if s.GraphURL == "" {
		return nil
	}
	sealed, err := s.Box.Seal("demo-page-token")
	if err != nil {
		return err
	}
	return s.Store.ProviderCredentialPut(ctx, models.ProviderCredential{WorkspaceID: wsID, Provider: "meta", TokenEnc: sealed, BaseURL: s.GraphURL})
}
