package ui

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// alarmBanners turns the workspace's firing alarms into the banners of the chrome.
func alarmBanners(ws models.Workspace, list []models.FiringAlarm, now time.Time) []views.AlarmBanner {
	out := make([]views.AlarmBanner, 0, len(list))
	for _, a := range list {
		page := views.NavGuards
		switch {
		case strings.HasPrefix(a.Link, "sources/"):
			page = views.NavSources
		case strings.HasPrefix(a.Link, "destinations/"):
			page = views.NavDest
		}
		msg := a.Message
		if a.SourceName != "" && !strings.Contains(msg, a.SourceName) {
			msg = a.SourceName + ": " + msg
		}
		out = append(out, views.AlarmBanner{Kind: a.Kind, Message: msg, Action: a.Action,
			Href: "/w/" + ws.Slug + "/" + a.Link, Page: page, Since: "for " + spanText(now.Sub(a.Since))})
	}
	return out
}

// spanText says a duration the way a person reads a banner: "12 min", "3 h 5 min", "2 d".
func spanText(d time.Duration) string {
	m := int(d.Round(time.Minute).Minutes())
	switch {
	case m < 1:
		return "under a minute"
	case m < 60:
		return fmt.Sprintf("%d min", m)
	case m < 48*60:
		if m%60 == 0 {
			return fmt.Sprintf("%d h", m/60)
		}
		return fmt.Sprintf("%d h %d min", m/60, m%60)
	}
	return fmt.Sprintf("%d d", m/(24*60))
}

// loadAlarmChrome fills the nav counts and banners of a workspace page.
func (u *UI) loadAlarmChrome(r *http.Request, ws models.Workspace, m *views.PageMeta) error {
	now := u.now()
	firing, err := u.Store.AlarmsFiringAt(r.Context(), ws.ID, now)
	if err != nil {
		return err
	}
	m.Alarms = alarmBanners(ws, firing, now)
	m.DeadLettersOpen, err = u.Store.DeadLettersOpenCount(r.Context(), ws.ID)
	return err
}

// sourceAlarmStates says per source what its row shows: "refusing deliveries" or "silent 12 min".
func sourceAlarmStates(list []models.FiringAlarm, now time.Time) map[int64]string {
	out := map[int64]string{}
	for _, a := range list {
		if a.SourceID == nil {
			continue
		}
		switch a.Kind {
		case models.AlarmSignatureRefused:
			out[*a.SourceID] = "refusing deliveries"
		case models.AlarmSilence:
			if _, refusing := out[*a.SourceID]; !refusing {
				out[*a.SourceID] = "silent " + spanText(now.Sub(a.Since))
			}
		}
	}
	return out
}
