package actions_test

import (
	"testing"

	"github.com/leadgate/leadgate/models"
)

// audits counts the audit entries of one action on one subject.
func audits(t *testing.T, st *models.Store, action, subject string) int64 {
	t.Helper()
	var n int64
	if err := st.DB().Raw(`SELECT count(*) FROM audit_log WHERE action = ? AND subject_id = ?`, action, subject).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}
