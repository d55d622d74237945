//go:build proof

package chaos

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A web process that gets SIGTERM while deliveries keep coming answers 503 "draining" on /readyz at
// once, keeps answering deliveries for LEADGATE_DRAIN_DELAY while the balancer's probe takes it out of
// rotation, finishes what it has and exits. A sender that never retries (as ActiveCampaign, Vapi and
// GoHighLevel on a 5xx) is answered 200 every time, and every delivery it was told was accepted is
// stored.
func TestASIGTERMDuringLoadLosesNothingAndAnswersNo5xx(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two leadgate web processes under load")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed")
	}
	bin := leadgateBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	rs, err := newRedisServer(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.remove()
	serverURL := DefaultConfig().PostgresURL
	db := "leadgate_drain_" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	dbURL, err := databaseURL(serverURL, db)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dropDatabase(context.WithoutCancel(ctx), serverURL, db) }()
	lg, err := prepareLeadgate(ctx, bin, dir, dbURL, rs.url(0), 4)
	if err != nil {
		t.Fatal(err)
	}
	var bases, addrs []string
	for range 2 {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(port))
		bases = append(bases, "http://127.0.0.1:"+strconv.Itoa(port))
	}
	lb, err := newBalancer(bases, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer lb.close()
	var webs []*roleProc
	for i := range 2 {
		p := &roleProc{role: "web", name: fmt.Sprintf("web%d", i+1), bin: bin, base: bases[i], log: filepath.Join(dir, fmt.Sprintf("web%d.log", i+1)),
			env: withVars(lg.env, map[string]string{"LEADGATE_ADDR": addrs[i], "LEADGATE_PUBLIC_URL": lb.url(), "LEADGATE_DRAIN_DELAY": "1s",
				"LEADGATE_SPOOL_DIR": filepath.Join(dir, fmt.Sprintf("spool%d", i+1)), "LEADGATE_LOG_LEVEL": "info"})}
		if err := p.start(ctx); err != nil {
			t.Fatal(err)
		}
		defer p.proc.terminate(20 * time.Second)
		webs = append(webs, p)
	}
	control := &leadgateProc{base: lb.url(), token: lg.token, http: lg.http}
	if err := control.api(ctx, http.MethodPost, "/workspaces", map[string]string{"slug": workspace, "name": "Drain"}, nil); err != nil {
		t.Fatal(err)
	}
	var src struct {
		IngestURL string `json:"ingest_url"`
		Secret    string `json:"secret"`
	}
	if err := control.api(ctx, http.MethodPost, "/workspaces/"+workspace+"/sources", map[string]any{"name": "drain", "kind": "standard-webhooks"}, &src); err != nil {
		t.Fatal(err)
	}
	target := Target{URL: src.IngestURL, Secret: src.Secret}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var (
		mu       sync.Mutex
		answers  = map[int]int{}
		accepted []string
		wg       sync.WaitGroup
	)
	stop := make(chan struct{})
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"event_type":"form_submitted","email":"drain-%d-%d@example.com"}`, g, i)
				a := post(ctx, client, target, fmt.Sprintf("msg_drain_%d_%d", g, i), []byte(body))
				mu.Lock()
				answers[a.status]++
				if a.status == http.StatusOK && a.answer == "queued" {
					accepted = append(accepted, a.eventID)
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(1500 * time.Millisecond) // load on both web processes
	began := time.Now()
	webs[0].proc.terminate(30 * time.Second)
	took := time.Since(began)
	time.Sleep(1500 * time.Millisecond) // load on the one left
	close(stop)
	wg.Wait()

	t.Logf("answers by status %v; %d accepted; web1 stopped %s after SIGTERM", answers, len(accepted), took.Round(time.Millisecond))
	if ok := answers[http.StatusOK]; ok == 0 || len(answers) != 1 {
		t.Errorf("answers by status %v: want only 200s (0 = no answer at all)", answers)
	}
	if took < time.Second {
		t.Errorf("web1 exited %s after SIGTERM, before its 1 s drain delay", took)
	}
	if log := tail(webs[0].log, 50); !strings.Contains(log, "http: draining") {
		t.Errorf("web1 did not drain; its log ends:\n%s", log)
	}
	stored, err := control.eventStatuses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	for _, id := range accepted {
		if _, ok := stored[id]; !ok {
			missing++
		}
	}
	if missing > 0 || len(accepted) == 0 {
		t.Errorf("%d of %d accepted deliveries are not stored", missing, len(accepted))
	}
}
