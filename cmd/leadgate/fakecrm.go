package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/leadgate/leadgate/cmd/leadgate/chaos"
)

// cmdFakeCRM serves a fake ActiveCampaign account (v3 API under /api/3/, per-account rate limit with
// 429 + Retry-After, injectable 503s and latency) until interrupted. Its first stdout line is JSON:
// {"url": base URL, "control": control API URL, "token": the Api-Token it accepts}.
func cmdFakeCRM(ctx context.Context, args []string, stdout, stderr io.Writer, _ func(string) string) error {
	fs := flag.NewFlagSet("fakecrm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o chaos.FakeCRMOptions
	fs.IntVar(&o.RPS, "rps", 5, "requests per second per account before 429 + Retry-After (0: no limit)")
	fs.DurationVar(&o.Latency, "latency", 0, "latency added to every request")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the random 503s")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 || o.RPS < 0 || o.Latency < 0 {
		return fmt.Errorf("fakecrm: usage: leadgate chaos fakecrm [--rps N] [--latency D] [--seed N]")
	}
	f, err := chaos.NewFakeCRM(o)
	if err != nil {
		return err
	}
	defer f.Close()
	line, _ := json.Marshal(f.Info())
	fmt.Fprintf(stdout, "%s\n", line)
	<-ctx.Done()
	// Let a last control request finish before the servers close.
	time.Sleep(50 * time.Millisecond)
	return nil
}
