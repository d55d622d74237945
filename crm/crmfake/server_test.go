package crmfake_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
)

func TestMaxInWindow(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(ms ...int) []time.Time {
		var out []time.Time
		for _, m := range ms {
			out = append(out, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return out
	}
	tests := []struct {
		name  string
		times []time.Time
		want  int
	}{
		{"empty", nil, 0},
		{"exactly a window apart do not share a window", at(0, 1000, 2000), 1},
		{"unsorted input", at(900, 0, 500, 1400), 3},
		{"burst", at(0, 1, 2, 3, 4, 5, 999), 7},
	}
	for _, tc := range tests {
		if got := crmfake.MaxInWindow(tc.times, time.Second); got != tc.want {
			t.Errorf("%s: MaxInWindow = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestActiveCampaignFakeRateLimitsAndFails(t *testing.T) {
	f := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{RateLimit: 2, RetryAfter: 3}})
	defer f.Close()
	get := func(token string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, f.URL+"/api/3/contacts", nil)
		req.Header.Set("Api-Token", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	var statuses []int
	for range 3 {
		statuses = append(statuses, get("tok").StatusCode)
	}
	if statuses[0] != 200 || statuses[1] != 200 || statuses[2] != 429 {
		t.Errorf("statuses %v, want 200 200 429", statuses)
	}
	reqs := f.Requests()
	if len(reqs) != 3 || reqs[2].Status != 429 || f.MaxRequestsInWindow(time.Second) != 3 {
		t.Errorf("request log %+v", reqs)
	}
	if resp := get(""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("missing token: %d", resp.StatusCode)
	}
}

func TestFailRateIsSeededAndApproximate(t *testing.T) {
	f := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{FailRate: 0.2, Seed: 7}})
	defer f.Close()
	fails := 0
	for range 500 {
		req, _ := http.NewRequest(http.MethodGet, f.URL+"/crm/v3/objects/contacts", nil)
		req.Header.Set("Authorization", "Bearer t")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			fails++
		}
	}
	if fails < 60 || fails > 140 {
		t.Errorf("503s = %d of 500, want about 100", fails)
	}
}
