package ui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/a-h/templ"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// auditPageSize is how many entries the history shows per page.
const auditPageSize = 50

// ListAudit shows the workspace's (and instance-wide) history with diffs.
func (u *UI) ListAudit(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	page := models.Page{Limit: auditPageSize, Cursor: r.URL.Query().Get("cursor")}
	if _, err := strconv.ParseInt(page.Cursor, 10, 64); err != nil {
		page.Cursor = ""
	}
	list, err := u.Store.AuditList(r.Context(), ws.ID, page)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	// A user restricted to some workspaces (a client login) does not see the
	// instance-wide history: other clients' users and tokens.
	restricted, err := handlers.IsRestricted(r, u.Store)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	path := "/w/" + ws.Slug + "/audit"
	v := views.AuditView{Workspace: wsRef(ws), Now: u.now()}
	for _, e := range list {
		if restricted && e.WorkspaceID == nil {
			continue
		}
		subject := e.SubjectType
		if e.SubjectID != "" {
			subject += " " + e.SubjectID
		}
		v.Rows = append(v.Rows, views.AuditRow{ID: e.ID, At: e.At, Actor: e.Actor, Action: e.Action, Subject: subject,
			Diff: auditDiff(e.Before, e.After), InstanceWid: e.WorkspaceID == nil})
	}
	if page.Cursor != "" {
		v.FirstURL = path
	}
	if len(list) == auditPageSize {
		v.NextURL = withQuery(path, url.Values{"cursor": {strconv.FormatInt(list[len(list)-1].ID, 10)}})
	}
	u.page(w, r, http.StatusOK, views.NavAudit, "Audit history", func(m views.PageMeta) templ.Component { return views.AuditPage(m, v) })
}

// auditDiff flattens before and after into dotted paths and lists the paths
// whose values differ, sorted by path.
func auditDiff(before, after json.RawMessage) []views.DiffRow {
	b, a := map[string]string{}, map[string]string{}
	flattenJSON(before, "", b)
	flattenJSON(after, "", a)
	paths := map[string]bool{}
	for p := range b {
		paths[p] = true
	}
	for p := range a {
		paths[p] = true
	}
	var rows []views.DiffRow
	for p := range paths {
		bv, inB := b[p]
		av, inA := a[p]
		switch {
		case inB && inA && bv == av:
			continue
		case !inB:
			rows = append(rows, views.DiffRow{Path: p, After: av, Change: "added"})
		case !inA:
			rows = append(rows, views.DiffRow{Path: p, Before: bv, Change: "removed"})
		default:
			rows = append(rows, views.DiffRow{Path: p, Before: bv, After: av, Change: "changed"})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Path < rows[j].Path })
	return rows
}

// flattenJSON writes every leaf of raw into out under its dotted path; an
// empty object or array is a leaf of its own so that clearing one shows up.
func flattenJSON(raw json.RawMessage, prefix string, out map[string]string) {
	if len(raw) == 0 {
		return
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		out[cmpKey(prefix)] = string(raw)
		return
	}
	flattenValue(v, prefix, out)
}

func flattenValue(v any, prefix string, out map[string]string) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 && prefix != "" {
			out[prefix] = "{}"
		}
		for k, x := range t {
			flattenValue(x, join(prefix, k), out)
		}
	case []any:
		if len(t) == 0 {
			out[cmpKey(prefix)] = "[]"
		}
		for i, x := range t {
			flattenValue(x, join(prefix, strconv.Itoa(i)), out)
		}
	case nil:
		if prefix != "" {
			out[prefix] = "null"
		}
	default:
		b, _ := json.Marshal(t)
		out[cmpKey(prefix)] = string(b)
	}
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// cmpKey names a top-level scalar (an audit value that is not an object).
func cmpKey(prefix string) string {
	if prefix == "" {
		return "(value)"
	}
	return prefix
}
