package testkit

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// RunWaitBound runs a package's tests with up to parallel of its t.Parallel tests at once, unless
// -test.parallel was given. Go's default is one per CPU, which suits CPU-bound tests; a package whose
// tests mostly wait (on a CRM fake's rate window, a lease, a retry timer) finishes in a fraction of the
// time with more at once. Each test still has its own database and Redis DB.
func RunWaitBound(m *testing.M, parallel int) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		if err := flag.Set("test.parallel", strconv.Itoa(parallel)); err != nil {
			panic("testkit: set -test.parallel: " + err.Error())
		}
	}
	os.Exit(m.Run())
}
