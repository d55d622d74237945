package handlers

import "github.com/leadgate/leadgate/models"

// eventStatuses are the statuses an event can have, which the event filters accept.
var eventStatuses = map[string]bool{models.EventPending: true, models.EventWaiting: true, models.EventRetrying: true,
	models.EventApplied: true, models.EventUnchanged: true, models.EventQuarantined: true, models.EventRejected: true, models.EventDropped: true}

// IsEventStatus reports whether s is one of eventStatuses.
func IsEventStatus(s string) bool {
	return eventStatuses[s]
}
