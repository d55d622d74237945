//go:build proof

package boundary

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/leadgate/leadgate/cmd/leadgate/chaos"
)

// leadgateBin is the binary every test runs, built once by TestMain (or $LEADGATE_CHAOS_BINARY).
var leadgateBin string

// TestMain builds the binary once. The boundaries spend most of their time waiting (leases, the
// stranded-event sweep), so they run side by side: -parallel defaults to 8 here unless given.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", "8")
	}
	if testing.Short() {
		os.Exit(m.Run()) // every test skips itself
	}
	leadgateBin = os.Getenv("LEADGATE_CHAOS_BINARY")
	if leadgateBin == "" {
		dir, err := os.MkdirTemp("", "leadgate-boundary-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		leadgateBin, err = chaos.BuildBinary(ctx, dir)
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}
