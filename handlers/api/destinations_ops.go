package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/sandbox"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/models"
)

// crmError answers a CRM failure during onboarding: 502 with the CRM's classified message.
func crmError(w http.ResponseWriter, err error) {
	var ce *crm.Error
	if egress.IsBlocked(err) {
		// The outbound guard refused the address before any request left: no credential was tried.
		handlers.WriteJSON(w, http.StatusBadGateway, map[string]any{"error": err.Error(), "class": "blocked", "status": 0})
		return
	}
	if errors.As(err, &ce) {
		handlers.WriteJSON(w, http.StatusBadGateway, map[string]any{"error": ce.Error(), "class": ce.Class.String(), "status": ce.Status})
		return
	}
	handlers.WriteJSON(w, http.StatusBadGateway, map[string]any{"error": err.Error()})
}

// onboardingError answers an onboarding action's error; a CRM's failure and fields it cannot create keep
// their richer bodies (the CRM's class and status; the loop-field check), which the generic mapping lacks.
func (h *Destinations) onboardingError(w http.ResponseWriter, r *http.Request, err error) {
	var crmErr *actions.DestinationCRMError
	var fieldsErr *actions.DestinationFieldsError
	switch {
	case errors.As(err, &crmErr):
		crmError(w, crmErr.Err)
	case errors.As(err, &fieldsErr):
		handlers.WriteJSON(w, http.StatusConflict, map[string]any{"error": fieldsErr.Message, "loop": fieldsErr.Loop})
	default:
		writeActionError(h.Log, w, r, err)
	}
}

func (h *Destinations) adapter(w http.ResponseWriter, r *http.Request) (models.Destination, crm.Destination, context.Context, context.CancelFunc, bool) {
	d, ok := h.load(w, r)
	if !ok {
		return d, nil, nil, nil, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), actions.OnboardingTimeout)
	a, err := h.Connector.Adapter(ctx, d)
	if err != nil {
		cancel()
		handlers.WriteError(w, http.StatusBadRequest, "", "destination cannot be used: "+err.Error())
		return d, nil, nil, nil, false
	}
	return d, a, ctx, cancel, true
}

// TestConnection makes one authenticated read and lists every piece of the setup the account lacks:
// 200 {"ok":true,"setup_complete":bool,"missing":[…],"can_create":bool} (ok: the read passed; can_create:
// POST .../loop-fields {"create":true} creates some of the missing pieces), or 502 with the CRM's answer
// when the read is refused.
func (h *Destinations) TestConnection(w http.ResponseWriter, r *http.Request) {
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	rep, err := h.act().TestConnection(r.Context(), d)
	if err != nil {
		h.onboardingError(w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"ok": rep.Connected, "setup_complete": rep.Complete(), "missing": rep.Missing, "can_create": rep.CanCreate})
}

// Discover answers the CRM's custom fields, pipelines/stages, lifecycle options and the loop-field check.
func (h *Destinations) Discover(w http.ResponseWriter, r *http.Request) {
	_, a, ctx, cancel, ok := h.adapter(w, r)
	if !ok {
		return
	}
	defer cancel()
	disc, err := a.Discover(ctx)
	if err != nil {
		crmError(w, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, disc)
}

// LoopFields checks the loop-breaker fields; with {"create":true} it creates the missing loop-breaker
// and stage fields where the CRM's API allows (audited), else it answers what to add by hand and the
// workflow condition to set. A destination the system paused for its setup resumes at once when nothing
// is missing any more. The UI's "Create missing fields" calls this same action.
func (h *Destinations) LoopFields(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Create bool `json:"create"`
	}
	if r.ContentLength != 0 && !decodeJSON(w, r, &in) {
		return
	}
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	res, err := h.act().LoopFields(r.Context(), d, handlers.Actor(r), in.Create)
	if err != nil {
		h.onboardingError(w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"loop": res.Loop, "created": len(res.Created) > 0, "created_fields": res.Created,
		"missing": res.Missing, "resumed": res.Resumed})
}

// StartImport answers 202 {"import_id"}; the import runs as a task (GET .../imports/{import} for progress).
func (h *Destinations) StartImport(w http.ResponseWriter, r *http.Request) {
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	var im models.SyncImport
	err := h.Store.Tx(r.Context(), func(tx *models.Store) error {
		var err error
		if im, err = tx.SyncImportStart(r.Context(), d.ID, handlers.Actor(r)); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: d.WorkspaceID, Actor: handlers.Actor(r), Action: "destination.import",
			SubjectType: "destination", SubjectID: strconv.FormatInt(d.ID, 10), After: map[string]any{"import_id": im.ID}})
	})
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	if err := h.Sync.StartImport(r.Context(), d.ID, im.ID, handlers.Actor(r)); err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusAccepted, map[string]any{"import_id": im.ID, "status": im.Status})
}

// GetImport answers one import run.
func (h *Destinations) GetImport(w http.ResponseWriter, r *http.Request) {
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	id, _ := strconv.ParseInt(chi.URLParam(r, "import"), 10, 64)
	im, err := h.Store.SyncImportGet(r.Context(), d.ID, id)
	if errors.Is(err, models.ErrNotFound) {
		handlers.WriteError(w, http.StatusNotFound, "import", "unknown import")
		return
	}
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, im)
}

// Stats answers CRM calls, 429s, failures, synced versions, queue depth and age, sync lag, conflicts, drift.
func (h *Destinations) Stats(w http.ResponseWriter, r *http.Request) {
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	st, err := h.Store.DestinationStatsGet(r.Context(), d)
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, st)
}

// Conflicts answers the remote edits leadgate kept, newest first (?contact_id=, ?limit=, ?cursor=).
func (h *Destinations) Conflicts(w http.ResponseWriter, r *http.Request) {
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	page, ok := pageFrom(w, r)
	if !ok {
		return
	}
	list, err := h.Store.SyncConflicts(r.Context(), d.ID, r.URL.Query().Get("contact_id"), page)
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	last := ""
	if len(list) > 0 {
		last = strconv.FormatInt(list[len(list)-1].ID, 10)
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"conflicts": list, "next_cursor": nextCursor(len(list), page.Limit, last)})
}

// Drift answers the latest drift check's differences between what leadgate wrote and the CRM.
func (h *Destinations) Drift(w http.ResponseWriter, r *http.Request) {
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	list, err := h.Store.SyncDriftList(r.Context(), d.ID, 500)
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"drift": list})
}

// Resync queues the current state of one contact ({"contact_id"}) or of every contact ({}) for the destination.
func (h *Destinations) Resync(w http.ResponseWriter, r *http.Request) {
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	var in struct {
		ContactID string `json:"contact_id"`
	}
	if r.ContentLength != 0 && !decodeJSON(w, r, &in) {
		return
	}
	var n int64
	err := h.Store.Tx(r.Context(), func(tx *models.Store) error {
		var err error
		if in.ContactID != "" {
			if _, err = tx.ContactGet(r.Context(), d.WorkspaceID, in.ContactID); err != nil {
				return err
			}
			n, err = 1, tx.SyncRequeue(r.Context(), d.ID, in.ContactID)
		} else {
			n, err = tx.SyncRequeueAll(r.Context(), d.ID)
			if err == nil {
				// A whole-destination resync: a CRM with a bulk import takes it in batches (crm/syncer/bulk.go).
				_, err = tx.SyncMarkBulk(r.Context(), d.ID)
			}
		}
		if err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: d.WorkspaceID, Actor: handlers.Actor(r), Action: "destination.resync",
			SubjectType: "destination", SubjectID: strconv.FormatInt(d.ID, 10), After: map[string]any{"contact_id": in.ContactID, "queued": n}})
	})
	if errors.Is(err, models.ErrNotFound) {
		handlers.WriteError(w, http.StatusNotFound, "contact_id", "unknown contact")
		return
	}
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	if h.Sync != nil {
		_ = h.Sync.Kick(r.Context())
	}
	handlers.WriteJSON(w, http.StatusAccepted, map[string]any{"queued": n})
}

// ReplayDeadLetter resends the contact's CURRENT desired state for a CRM dead letter (never its payload).
func (h *Destinations) ReplayDeadLetter(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "dl"), 10, 64)
	if err != nil {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown dead letter")
		return
	}
	p, err := h.Store.SyncReplayDeadLetter(r.Context(), handlers.WorkspaceFrom(r).ID, id, handlers.Actor(r))
	switch {
	case errors.Is(err, models.ErrNotFound):
		handlers.WriteError(w, http.StatusNotFound, "id", "no open dead letter "+strconv.FormatInt(id, 10))
		return
	case errors.Is(err, models.ErrNotCRMDeadLetter):
		handlers.WriteError(w, http.StatusBadRequest, "id", "dead letter "+strconv.FormatInt(id, 10)+" is not a CRM sync dead letter")
		return
	case err != nil:
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	if h.Sync != nil {
		_ = h.Sync.Kick(r.Context())
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"status": models.DeadLetterReplayed, "destination_id": p.DestinationID, "contact_id": p.ContactID})
}

// SandboxContacts browses a sandbox destination's records (?limit=, ?cursor=).
func (h *Destinations) SandboxContacts(w http.ResponseWriter, r *http.Request) {
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	if d.Kind != crm.KindSandbox {
		handlers.WriteError(w, http.StatusBadRequest, "id", "destination "+d.Name+" is not a sandbox")
		return
	}
	page, ok := pageFrom(w, r)
	if !ok {
		return
	}
	after, _ := strconv.ParseInt(page.Cursor, 10, 64)
	recs, err := sandbox.List(r.Context(), h.Store.DB(), d.ID, after, page.Limit)
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	last := ""
	if len(recs) > 0 {
		last = strconv.FormatInt(recs[len(recs)-1].ID, 10)
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"contacts": recs, "next_cursor": nextCursor(len(recs), page.Limit, last)})
}
