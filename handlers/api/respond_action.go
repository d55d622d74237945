package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/handlers"
)

// writeActionError answers an operator action's error as the JSON API does: a refused input is a 400 with
// its field, a missing subject a 404, a conflict a 409, a failing remote a 502, anything else a logged 500.
func writeActionError(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	var field *actions.FieldError
	var conflict *actions.ConflictError
	var upstream *actions.UpstreamError
	var missing *actions.NotFoundError
	switch {
	case errors.As(err, &field):
		handlers.WriteError(w, http.StatusBadRequest, field.Field, field.Message)
	case errors.As(err, &missing):
		handlers.WriteError(w, http.StatusNotFound, missing.Field, missing.Message)
	case errors.As(err, &conflict):
		handlers.WriteError(w, http.StatusConflict, conflict.Field, conflict.Message)
	case errors.As(err, &upstream):
		handlers.WriteError(w, http.StatusBadGateway, "", upstream.Message)
	default:
		handlers.ServerError(log, w, r, err)
	}
}
