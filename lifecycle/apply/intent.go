package apply

import (
	"time"

	"github.com/leadgate/leadgate/models"
)

// Intent is a contact's desired state in the CRM at one version: what the
// outbox relay hands to a destination adapter.
type Intent struct {
	ContactID       string            `json:"contact_id"`
	Version         int64             `json:"version"`
	Email           string            `json:"email,omitempty"`
	Phone           string            `json:"phone,omitempty"`
	FirstName       string            `json:"first_name,omitempty"`
	LastName        string            `json:"last_name,omitempty"`
	Company         string            `json:"company,omitempty"`
	Stage           string            `json:"stage"`
	Fields          map[string]string `json:"fields,omitempty"`
	FirstTouch      map[string]string `json:"first_touch,omitempty"`
	Tags            []string          `json:"tags,omitempty"`
	Score           int               `json:"score"`
	SubmissionCount int               `json:"submission_count"`
	LastActivityAt  time.Time         `json:"last_activity_at"`
}

// IntentOf captures a contact's current desired state.
func IntentOf(c *models.Contact) Intent {
	return Intent{ContactID: c.ID, Version: c.Version, Email: deref(c.Email), Phone: deref(c.Phone), FirstName: deref(c.FirstName),
		LastName: deref(c.LastName), Company: deref(c.Company), Stage: c.Stage, Fields: c.Fields, FirstTouch: c.FirstTouch,
		Tags: c.Tags, Score: c.Score, SubmissionCount: c.SubmissionCount, LastActivityAt: c.LastActivityAt}
}
