package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/internal/testkit"
)

// `demo` without LEADGATE_SECRET_KEY warns at start-up with serve's warning, at serve's level.
func TestDemoWarnsAboutTheDevelopmentKeyLikeServe(t *testing.T) {
	_, dbURL := migratedStore(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := map[string]string{"LEADGATE_DATABASE_URL": dbURL, "LEADGATE_REDIS_URL": testkit.RedisDB(t), "LEADGATE_SPOOL_DIR": "off",
		"LEADGATE_ADDR": addr, "LEADGATE_PUBLIC_URL": "http://" + addr}
	var out, errs bytes.Buffer
	if err := cmdDemo(context.Background(), []string{"--duration", "3s", "--seed", "1"}, &out, &errs, func(k string) string { return env[k] }); err != nil {
		t.Fatalf("demo: %v\n%s", err, errs.String())
	}
	var warn string
	for _, line := range strings.Split(errs.String(), "\n") {
		if strings.Contains(line, "LEADGATE_SECRET_KEY is not set") {
			warn = line
		}
	}
	if !strings.Contains(warn, `"level":"WARN"`) || !strings.Contains(warn, "NOT protected") {
		t.Fatalf("demo printed no development-key warning at WARN level; stderr:\n%.2000s", errs.String())
	}
}
