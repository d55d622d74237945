package handlers

import (
	"net/http"
	"time"
)

// ListFiringAlarms answers {"alarms": [...]}: what the banners show, from the same query.
func (a *API) ListFiringAlarms(w http.ResponseWriter, r *http.Request) {
	list, err := a.Store.AlarmsFiringAt(r.Context(), WorkspaceFrom(r).ID, time.Now())
	if err != nil {
		ServerError(a.Log, w, r, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"alarms": list})
}
