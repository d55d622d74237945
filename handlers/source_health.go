package handlers

import (
	"context"

	"github.com/leadgate/leadgate/models"
)

// SourceHealth is what the API and the source page show of a source's
// deliveries: its refused counts and its alarms firing now.
func SourceHealth(ctx context.Context, st *models.Store, src models.Source) (models.SourceDeliveries, []models.FiringAlarm, error) {
	d, err := st.SourceDeliveriesGet(ctx, src.ID)
	if err != nil {
		return d, nil, err
	}
	all, err := st.AlarmsFiring(ctx, src.WorkspaceID)
	if err != nil {
		return d, nil, err
	}
	alarms := []models.FiringAlarm{}
	for _, a := range all {
		if a.SourceID != nil && *a.SourceID == src.ID {
			alarms = append(alarms, a)
		}
	}
	return d, alarms, nil
}
