//go:build !unix

package failpoint

import "os"

// killSelf stops the process at once where SIGKILL is not available.
func killSelf() {
	os.Exit(137)
}
