package actions

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/leadgate/leadgate/models"
)

var hostnamePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// PutAlertingSettings replaces the heartbeat URL and the allowed hosts. Only admins may call it: allowed
// hosts open the SSRF guard. The hosts are saved lower-cased and trimmed.
func (g *Guards) PutAlertingSettings(ctx context.Context, ws models.Workspace, actor string, in models.AlertingSettings) (models.AlertingSettings, error) {
	if len(in.AllowedHosts) > 20 {
		return models.AlertingSettings{}, Invalid("allowed_hosts", "at most 20 allowed hosts")
	}
	for i, h := range in.AllowedHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if _, err := netip.ParseAddr(h); err != nil && (len(h) > 253 || !hostnamePattern.MatchString(h)) {
			return models.AlertingSettings{}, Invalid("allowed_hosts["+strconv.Itoa(i)+"]", "an allowed host is a host name or IP address, without scheme, port or wildcard")
		}
		in.AllowedHosts[i] = h
	}
	if in.HeartbeatURL != "" {
		// The heartbeat may reach the hosts being allowed by this same save.
		guard := g.Guards.Base
		guard.AllowedHosts = append(append([]string(nil), guard.AllowedHosts...), in.AllowedHosts...)
		if _, err := guard.CheckURL(in.HeartbeatURL); err != nil {
			return models.AlertingSettings{}, Invalid("heartbeat_url", err.Error())
		}
	}
	err := g.Store.Tx(ctx, func(tx *models.Store) error {
		cur, err := tx.GuardSettingsGet(ctx, ws.ID)
		if err != nil {
			return err
		}
		before := cur.Alerting
		cur.Alerting, cur.UpdatedBy = in, actor
		if err := tx.GuardSettingsSave(ctx, cur); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: ws.ID, Actor: actor, Action: "guards.alerting.update",
			SubjectType: "guard_settings", SubjectID: ws.Slug, Before: before, After: in})
	})
	if err != nil {
		return models.AlertingSettings{}, fmt.Errorf("save alerting settings of %s: %w", ws.Slug, err)
	}
	return in, nil
}
