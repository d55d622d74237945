package crm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Destination kinds.
const (
	KindActiveCampaign = "activecampaign"
	KindHubSpot        = "hubspot"
	KindGoHighLevel    = "gohighlevel"
	KindSandbox        = "sandbox"
)

// Stage modes: where the lifecycle stage is written.
const (
	// StageModeField writes the stage as a contact field (AC custom field, HubSpot property, GHL custom field).
	StageModeField = "field"
	// StageModeDeal creates the contact's first deal/opportunity in Config.Pipeline and moves its stage.
	StageModeDeal = "deal"
)

// Automations settings (Config.Automations).
const (
	AutomationsLive   = "live"
	AutomationsNever  = "never"
	AutomationsAlways = "always"
)

// Loop-breaker defaults (issue 4 §8).
const (
	DefaultLoopField = "last_automation_source"
	LoopValue        = "leadgate"
	DefaultSyncField = "sync_timestamp"
)

// Keys in Contact.Previous / Result.Written that do not name a remote field but record other state
// leadgate wrote, so that a retry or a later sync does not repeat it.
const (
	// PrevTags is the sorted, newline-joined set of tags leadgate last applied.
	PrevTags = "_tags"
	// PrevNote is the last note leadgate appended; an identical note is not appended again.
	PrevNote = "_note"
	// PrevDealID is the id of the deal/opportunity leadgate created for the contact (deal mode).
	PrevDealID = "_deal_id"
	// PrevDealStage is the remote stage id leadgate last set on that deal (deal mode).
	PrevDealStage = "_deal_stage"
)

// Contact is leadgate's desired state for one contact, as written to the CRM.
type Contact struct {
	LeadgateID string // leadgate contact id (uuid string)
	Version    int64  // per-contact increasing desired-state version
	RemoteID   string // the CRM's id when already known ("" otherwise)

	// Identity and name, already normalized (email lower-case, phone E.164).
	Email, Phone, FirstName, LastName, Company string

	Stage      string            // leadgate lifecycle stage name (mapped through Config.StageMap)
	Fields     map[string]string // custom fields by leadgate name (mapped through Config.FieldMap)
	FirstTouch map[string]string // first-touch attribution: never overwrites remote values that are set
	Tags       []string
	Score      int

	// SubmissionCount is leadgate's running count; it is written as an absolute value (FieldMap
	// "submission_count") so that a retried write cannot count twice.
	SubmissionCount int
	LastActivityAt  time.Time // FieldMap "last_activity_at", written as RFC 3339 UTC
	Note            string    // submission summary to append; skipped when equal to Previous[PrevNote]

	// Previous is what leadgate last wrote for each remote field (Result.Written of the last sync),
	// used to detect edits made since by a human or another integration.
	Previous map[string]string
	// InDoubt is what leadgate sent in writes whose answer never came (a timeout, a 5xx, a request cut off
	// by a shutdown): the CRM may hold these values, so a remote value equal to one is leadgate's own write,
	// not an edit to keep. Cleared by the next delivered write.
	InDoubt Doubt
}

// Config configures one destination.
type Config struct {
	Kind       string // activecampaign | hubspot | gohighlevel | sandbox
	BaseURL    string // AC: the account's API URL (with or without /api/3); others default to the public host
	APIToken   string
	LocationID string // gohighlevel

	// StageField is where the stage goes in field mode: AC custom field id (or perstag/title), HubSpot
	// property (default lifecyclestage), GHL custom field id (or key/name).
	StageField string
	StageMode  string            // "field" (default) | "deal"
	Pipeline   string            // deal mode: pipeline id (AC dealGroup, GHL pipeline)
	StageMap   map[string]string // leadgate stage -> remote stage value (field mode) or stage id (deal mode)

	// FieldMap maps leadgate field names to remote fields (AC/GHL custom field id, key or name; HubSpot
	// property). Besides custom fields it may map "company" (AC), "score", "submission_count",
	// "last_activity_at" and "tags" (HubSpot, written ";"-joined). Unmapped leadgate fields are not written.
	FieldMap map[string]string

	LoopField string // default "last_automation_source"; written with the value "leadgate"
	SyncField string // default "sync_timestamp"; written with the time of the write

	// AllowNullEmail (ActiveCampaign) says the account has opted in to phone-only contacts: leads with a
	// phone and no email are created with allowNullEmail, and a lead whose email is new is also looked up
	// by phone (only such an account can hold a phone-only record of the same person). Off, a phone-only
	// lead that matches no contact is a Setup fault of the destination.
	AllowNullEmail bool
	// DealOwner (ActiveCampaign deal mode) is the user id that owns the deals leadgate creates in a
	// pipeline whose auto-assign option is off; empty: the user the API token belongs to (GET /users/me).
	DealOwner string
	// Automations (ActiveCampaign) says which bulk imports start the account's automations:
	// AutomationsLive (default: live leads do, resyncs and backfills never), AutomationsNever, AutomationsAlways.
	Automations string

	HTTPClient *http.Client // default: a client with a 30 s timeout

	// Now returns the current time (tests); default time.Now.
	Now func() time.Time
}

// Result is the outcome of one contact of a batch. Err is nil or *Error.
type Result struct {
	LeadgateID string
	RemoteID   string
	Created    bool
	Err        error
	Conflicts  []FieldConflict
	Calls      int // HTTP requests spent on this contact (a batch request is attributed to each of its contacts)

	// Written is the new "what leadgate last wrote" map: Previous with this sync's writes applied. Store it
	// and pass it back as Contact.Previous next time. Conflicted fields keep leadgate's last value.
	Written map[string]string
	// InDoubt, on a failed result, is Contact.InDoubt with the values this attempt planned to write: what
	// the CRM may hold if the failed request reached it. Store it and pass it back as Contact.InDoubt.
	InDoubt Doubt
}

// FieldConflict is a human (or other integration) edit since our last write: we did not overwrite it.
type FieldConflict struct {
	Field   string // remote field key
	OurLast string // what leadgate last wrote
	Remote  string // what the CRM holds now
}

// Destination is one CRM account leadgate writes to.
type Destination interface {
	Kind() string
	// Upsert writes a micro-batch of at most MaxBatch contacts. Each contact is found by RemoteID (updated by
	// id, never re-searched), else by normalized email, then phone (compared exactly on our side); found
	// contacts are updated without overwriting first-touch fields or human edits, the rest are inserted.
	// Every mutation carries the loop-breaker flag. Upsert returns one Result per input, in input order;
	// a batch-level failure (429, auth, a fault of the destination's setup) returns the same Err in each Result.
	Upsert(ctx context.Context, batch []Contact) []Result
	// TestConnection makes one cheap authenticated read.
	TestConnection(ctx context.Context) error
	// Discover lists custom fields, pipelines/stages and lifecycle options, and whether the loop-breaker
	// fields exist (with instructions when they must be created by hand).
	Discover(ctx context.Context) (Discovery, error)
	// MaxBatch is the most contacts one Upsert call handles efficiently: HubSpot 100, others 1 (AC and GHL
	// have no synchronous batch endpoint; coalescing is the lever there).
	MaxBatch() int
}

// LoopFieldCreator is implemented by destinations whose API can create the loop-breaker fields.
type LoopFieldCreator interface {
	// CreateLoopFields creates the loop-breaker and sync-timestamp fields that do not exist yet.
	CreateLoopFields(ctx context.Context) error
}

// Discovery is what onboarding shows for mapping choices.
type Discovery struct {
	Fields           []RemoteField
	Pipelines        []Pipeline
	LifecycleOptions []Option // HubSpot lifecyclestage options; empty elsewhere
	Loop             LoopCheck
}

// RemoteField is one custom field / property of the CRM.
type RemoteField struct {
	ID    string // AC field id, HubSpot property name, GHL field id
	Key   string // AC perstag, GHL fieldKey, HubSpot property name
	Label string
	Type  string
}

// Pipeline is a deal pipeline (AC dealGroup, HubSpot deal pipeline, GHL pipeline).
type Pipeline struct {
	ID, Label string
	Stages    []Option
}

// Option is one choice of an enumerated value (a stage).
type Option struct {
	Value, Label string
	Order        int
}

// LoopCheck says whether the loop-breaker fields exist.
type LoopCheck struct {
	LoopField      string
	LoopFieldFound bool
	SyncField      string
	SyncFieldFound bool
	CanCreate      bool   // the API can create them (see LoopFieldCreator)
	Instructions   string // what to add by hand and the workflow condition to set; "" when both exist
}

// New builds the adapter for cfg.Kind. The sandbox lives in Postgres and is not built here.
func New(cfg Config) (Destination, error) {
	cfg = cfg.withDefaults()
	if cfg.APIToken == "" {
		return nil, fmt.Errorf("crm: new %s destination: api token is required", cfg.Kind)
	}
	switch cfg.StageMode {
	case StageModeField, StageModeDeal:
	default:
		return nil, fmt.Errorf("crm: new %s destination: stage mode %q is not field or deal", cfg.Kind, cfg.StageMode)
	}
	switch cfg.Automations {
	case AutomationsLive, AutomationsNever, AutomationsAlways:
	default:
		return nil, fmt.Errorf("crm: new %s destination: automations %q is not live, never or always", cfg.Kind, cfg.Automations)
	}
	switch cfg.Kind {
	case KindActiveCampaign:
		return newActiveCampaign(cfg)
	case KindHubSpot:
		return newHubSpot(cfg)
	case KindGoHighLevel:
		return newGoHighLevel(cfg)
	case KindSandbox:
		return nil, fmt.Errorf("crm: the sandbox destination is not built by crm.New")
	default:
		return nil, fmt.Errorf("crm: unknown destination kind %q", cfg.Kind)
	}
}

func (c Config) withDefaults() Config {
	c.Kind = strings.ToLower(strings.TrimSpace(c.Kind))
	if c.StageMode == "" {
		c.StageMode = StageModeField
	}
	if c.LoopField == "" {
		c.LoopField = DefaultLoopField
	}
	if c.SyncField == "" {
		c.SyncField = DefaultSyncField
	}
	if c.Automations == "" {
		c.Automations = AutomationsLive
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// loopInstructions is the onboarding text for loop-breaker fields that must be added by hand.
func loopInstructions(where string, loop, sync string) string {
	return fmt.Sprintf("Create two text fields in %s: %q and %q. leadgate writes %q = %q and %q = the time of "+
		"each write on every contact it changes. In every CRM workflow that sends contacts back to leadgate, add "+
		"the condition: stop when %s equals %s.", where, loop, sync, loop, LoopValue, sync, loop, LoopValue)
}
