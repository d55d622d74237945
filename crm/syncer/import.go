package syncer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/sandbox"
	"github.com/leadgate/leadgate/ingest/normalize"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// Importer brings a CRM's existing contacts into leadgate with their stages (issue 4 §12), so that a
// contact the CRM already has at SQL is created at SQL and later events can never push it back; contacts
// leadgate already knows are linked to their remote record. Reads go through the destination's rate
// limiter like every write.
type Importer struct {
	Store     *models.Store
	Connector *Connector
	Log       *slog.Logger
}

// Run imports every contact of the destination, recording progress in import run importID.
func (im *Importer) Run(ctx context.Context, destinationID, importID int64, actor string) (models.SyncImport, error) {
	run := models.SyncImport{ID: importID, DestinationID: destinationID, Status: "done"}
	err := im.run(ctx, destinationID, actor, &run)
	if err != nil {
		run.Status, run.Error = "failed", err.Error()
	}
	if ferr := im.Store.SyncImportFinish(context.WithoutCancel(ctx), run); ferr != nil && err == nil {
		err = ferr
	}
	return run, err
}

func (im *Importer) run(ctx context.Context, destinationID int64, actor string, run *models.SyncImport) error {
	d, err := im.Store.DestinationByID(ctx, destinationID)
	if err != nil {
		return err
	}
	rules, err := workspaceRules(ctx, im.Store, d.WorkspaceID)
	if err != nil {
		return err
	}
	stageOf := stageMapper(d, rules)
	region := "US"
	add := func(rc crm.RemoteContact, remoteStage string) error {
		run.Seen++
		ic := models.ImportedContact{RemoteID: rc.ID, FirstName: rc.FirstName, LastName: rc.LastName, Company: rc.Company,
			Stage: stageOf(remoteStage), Remote: rc.Values, CreatedAt: rc.CreatedAt}
		if e := normalize.Email(rc.Email); e.Valid {
			ic.Email = e.Value
		}
		if p := normalize.Phone(rc.Phone, region); p.Valid {
			ic.Phone = p.Value
		}
		outcome, err := im.Store.SyncImportContact(ctx, d.WorkspaceID, d.ID, ic, "import:"+actor, advanceTo(rules, ic.Stage, d, "import:"+actor))
		switch outcome {
		case models.ImportCreated:
			run.Created++
		case models.ImportLinked:
			run.Linked++
		}
		return err
	}
	if d.Kind == crm.KindSandbox {
		return im.fromSandbox(ctx, d, add)
	}
	reader, err := im.reader(ctx, d)
	if err != nil {
		return err
	}
	key := stageKey(d)
	cursor := ""
	for {
		page, next, err := reader.List(ctx, cursor)
		if err != nil {
			return fmt.Errorf("syncer: import from %s: %w", d.Name, err)
		}
		for _, rc := range page {
			if err := add(rc, rc.Values[key]); err != nil {
				return err
			}
		}
		if next == "" || len(page) == 0 {
			return nil
		}
		cursor = next
	}
}

func (im *Importer) fromSandbox(ctx context.Context, d models.Destination, add func(crm.RemoteContact, string) error) error {
	var after int64
	for {
		recs, err := sandbox.List(ctx, im.Store.DB(), d.ID, after, 200)
		if err != nil {
			return err
		}
		for _, r := range recs {
			rc := crm.RemoteContact{ID: strconv.FormatInt(r.ID, 10), Email: deref(r.Email), Phone: deref(r.Phone), FirstName: r.FirstName,
				LastName: r.LastName, Company: r.Company, Values: r.Values(), CreatedAt: r.CreatedAt}
			if err := add(rc, r.Stage); err != nil {
				return err
			}
			after = r.ID
		}
		if len(recs) < 200 {
			return nil
		}
	}
}

// advanceTo moves a linked contact forward to the CRM's stage when the CRM has it further along (never
// back), as a new desired version with stage history and a crm_upsert intent so other destinations follow.
func advanceTo(rules lifecycle.Rules, crmStage string, d models.Destination, actor string) func(tx *models.Store, c *models.Contact) error {
	return func(tx *models.Store, c *models.Contact) error {
		if crmStage == "" || rules.Rank(crmStage) <= rules.Rank(c.Stage) || rules.Rank(crmStage) >= len(rules.Stages) {
			return nil
		}
		ctx := context.Background()
		now := time.Now().UTC()
		from := c.Stage
		c.Stage, c.StageEnteredAt, c.Version = crmStage, &now, c.Version+1
		if err := tx.ContactSave(ctx, c); err != nil {
			return err
		}
		if err := tx.StageHistoryAdd(ctx, models.StageChange{WorkspaceID: c.WorkspaceID, ContactID: c.ID, FromStage: from, ToStage: crmStage,
			Actor: actor, Reason: "imported from " + d.Name + ": the CRM has the contact at " + crmStage, OccurredAt: now}); err != nil {
			return err
		}
		payload, err := json.Marshal(apply.IntentOf(c))
		if err != nil {
			return err
		}
		id := c.ID
		_, err = tx.OutboxAdd(ctx, models.OutboxRow{WorkspaceID: c.WorkspaceID, ContactID: &id, Kind: models.OutboxCRMUpsert,
			StableID: fmt.Sprintf("crm:%s:v%d", c.ID, c.Version), Version: c.Version, Action: "upsert", Payload: payload})
		return err
	}
}

// reader builds the destination's read client on the same limited HTTP path as its adapter.
func (im *Importer) reader(ctx context.Context, d models.Destination) (crm.Reader, error) {
	return readerFor(ctx, im.Connector, d)
}

func readerFor(ctx context.Context, c *Connector, d models.Destination) (crm.Reader, error) {
	conn, err := c.Connect(ctx, d)
	if err != nil {
		return nil, err
	}
	token := ""
	if len(d.APITokenEnc) > 0 {
		if token, err = c.Box.Open(d.APITokenEnc); err != nil {
			return nil, fmt.Errorf("syncer: open credentials of destination %d: %w", d.ID, err)
		}
	}
	var props []string
	if k := stageKey(d); k != "" && k != crm.PrevDealStage { // a deal stage is no contact property
		props = append(props, k)
	}
	for _, v := range d.Config.FieldMap {
		props = append(props, v)
	}
	pipeline := ""
	if d.Config.StageMode == crm.StageModeDeal {
		pipeline = d.Config.Pipeline
	}
	return crm.NewReader(crm.ReaderConfig{Kind: d.Kind, BaseURL: d.BaseURL, Token: token, LocationID: d.Config.LocationID,
		Pipeline: pipeline, Properties: props, HTTP: &http.Client{Transport: &limitedTransport{base: c.transport(), conn: conn, metrics: c.Metrics}}})
}

// stageKey is the remote field holding the stage: the stage field in field mode; in deal mode the stage
// of the contact's deal/opportunity in the pipeline.
func stageKey(d models.Destination) string {
	if d.Kind != crm.KindSandbox && d.Config.StageMode == crm.StageModeDeal {
		return crm.PrevDealStage
	}
	if d.Config.StageField != "" {
		return d.Config.StageField
	}
	if d.Kind == crm.KindHubSpot {
		return "lifecyclestage"
	}
	return ""
}

// stageMapper turns a remote stage value into a leadgate stage: through the reverse of stage_map, else by
// name (aliases included); "" when it names no leadgate stage.
func stageMapper(d models.Destination, rules lifecycle.Rules) func(string) string {
	reverse := map[string]string{}
	for ours, theirs := range d.Config.StageMap {
		reverse[strings.ToLower(strings.TrimSpace(theirs))] = ours
	}
	return func(remote string) string {
		remote = strings.TrimSpace(remote)
		if remote == "" {
			return ""
		}
		name := remote
		if ours, ok := reverse[strings.ToLower(remote)]; ok {
			name = ours
		}
		if canon, ok := rules.Canonical(name); ok {
			return canon
		}
		return ""
	}
}

// workspaceRules loads the stage rules in force (the defaults when none were saved).
func workspaceRules(ctx context.Context, store *models.Store, workspaceID int64) (lifecycle.Rules, error) {
	v, err := store.StageRulesCurrent(ctx, workspaceID)
	if errors.Is(err, models.ErrNotFound) {
		return lifecycle.DefaultRules(), nil
	}
	if err != nil {
		return lifecycle.Rules{}, err
	}
	return lifecycle.ParseRules(v.Rules)
}
