package testkit

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// randomHex returns 2n random hex digits.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// packageLabel names the test package in resource names: go test runs in
// the package directory, so its base name is the package. It is reduced
// to [a-z0-9_] and at most 20 characters.
func packageLabel() string {
	wd, err := os.Getwd()
	if err != nil {
		return "pkg"
	}
	var b strings.Builder
	for _, r := range strings.ToLower(filepath.Base(wd)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() == 20 {
			break
		}
	}
	if b.Len() == 0 {
		return "pkg"
	}
	return b.String()
}
