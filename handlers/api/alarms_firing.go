package api

import (
	"net/http"
	"time"

	"github.com/leadgate/leadgate/handlers"
)

// ListFiringAlarms answers {"alarms": [...]}: what the banners show, from the same query.
func (a *API) ListFiringAlarms(w http.ResponseWriter, r *http.Request) {
	list, err := a.Store.AlarmsFiringAt(r.Context(), handlers.WorkspaceFrom(r).ID, time.Now())
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"alarms": list})
}
