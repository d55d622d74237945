package syncer_test

import (
	"testing"

	"github.com/leadgate/leadgate/internal/testkit"
)

// The sync tests wait on CRM fakes' rate windows, leases and retry timers far more than they use the CPU.
func TestMain(m *testing.M) { testkit.RunWaitBound(m, 6) }
