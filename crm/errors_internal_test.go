package crm

import (
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 10, 31, 8, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":                              0,
		"30":                            30 * time.Second,
		" 1.5 ":                         1500 * time.Millisecond,
		"0":                             0,
		"-4":                            0,
		"soon":                          0,
		"Sat, 31 Oct 2026 08:00:10 GMT": 10 * time.Second,
		"Sat, 31 Oct 2026 07:59:00 GMT": 0,
		"99999999999":                   0,
	}
	for in, want := range tests {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestClassifyStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status     int
		header     http.Header
		body       string
		class      Class
		retry      time.Duration
		existingID string
	}{
		{429, http.Header{"Retry-After": {"30"}}, `{"message":"Too Many Requests"}`, RateLimited, 30 * time.Second, ""},
		{429, nil, ``, RateLimited, time.Second, ""},
		{400, nil, `{"success":0,"message":"Rate limit exceeded.","failureReasons":[]}`, RateLimited, time.Second, ""},
		{400, nil, `{"statusCode":400,"message":"This location does not allow duplicated contacts.","meta":{"contactId":"abc"}}`, Invalid, 0, "abc"},
		{401, nil, `{"statusCode":401,"message":"Invalid token"}`, Auth, 0, ""},
		{402, nil, ``, Auth, 0, ""},
		{403, nil, ``, Auth, 0, ""},
		{404, nil, `{"message":"No Result found for Subscriber with id 1"}`, NotFound, 0, ""},
		{409, nil, `{"status":"error","message":"Contact already exists. Existing ID: 37765128953","category":"CONFLICT"}`, Invalid, 0, "37765128953"},
		{422, nil, `{"errors":[{"title":"Email address already exists in the system","code":"duplicate"}]}`, Invalid, 0, ""},
		{423, nil, ``, Transient, 2 * time.Second, ""},
		{477, http.Header{"Retry-After": {"60"}}, ``, Transient, time.Minute, ""},
		{500, nil, `<html>oops</html>`, Transient, 0, ""},
		{503, nil, ``, Transient, 0, ""},
	}
	for _, tc := range tests {
		h := tc.header
		if h == nil {
			h = http.Header{}
		}
		e := classifyStatus(tc.status, h, []byte(tc.body))
		if e.Class != tc.class || e.RetryAfter != tc.retry || e.ExistingID != tc.existingID || e.Status != tc.status {
			t.Errorf("%d %s: got %+v, want class %v retry %v existing %q", tc.status, tc.body, e, tc.class, tc.retry, tc.existingID)
		}
	}
}

func TestErrorMessageShapes(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		`{"errors":[{"title":"Missing attribute","detail":"contact"}]}`:                "Missing attribute contact",
		`{"statusCode":422,"message":["property a should not exist","b"],"error":"x"}`: "property a should not exist; b",
		`{"status":"error","message":"Property values were not valid","category":"V"}`: "Property values were not valid",
		`not json`: "not json",
	}
	for in, want := range tests {
		if got := errorMessage([]byte(in)); got != want {
			t.Errorf("errorMessage(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestPlanWrites(t *testing.T) {
	t.Parallel()
	wants := []want{
		{key: "firstName", value: "Jane"},
		{key: "phone", value: "+14155550134"},
		{key: "utm", value: "ads", firstTouch: true},
		{key: "stage", value: "sql"},
	}
	tests := []struct {
		name      string
		remote    map[string]string
		exists    bool
		prev      map[string]string
		doubt     Doubt
		writes    map[string]string
		conflicts int
	}{
		{"new contact: everything", nil, false, nil, nil,
			map[string]string{"firstName": "Jane", "phone": "+14155550134", "utm": "ads", "stage": "sql"}, 0},
		{"equal values (phone formatting ignored): nothing", map[string]string{"firstName": "Jane", "phone": "+1 (415) 555-0134", "utm": "x", "stage": "sql"}, true, nil, nil,
			map[string]string{}, 0},
		{"first touch set remotely is kept", map[string]string{"utm": "google"}, true, nil, nil,
			map[string]string{"firstName": "Jane", "phone": "+14155550134", "stage": "sql"}, 0},
		{"remote changed since our write: conflict", map[string]string{"firstName": "Janet", "stage": "engaged"}, true,
			map[string]string{"firstName": "Jane", "stage": "engaged"}, nil,
			map[string]string{"phone": "+14155550134", "utm": "ads", "stage": "sql"}, 1},
		{"human cleared a field we wrote: conflict", map[string]string{"stage": ""}, true, map[string]string{"stage": "engaged"}, nil,
			map[string]string{"firstName": "Jane", "phone": "+14155550134", "utm": "ads"}, 1},
		{"remote holds what a write with a lost answer sent: ours, overwritten", map[string]string{"firstName": "Jane", "stage": "mql"}, true,
			map[string]string{"firstName": "Jane", "stage": "engaged"}, Doubt{"stage": {"mql"}},
			map[string]string{"phone": "+14155550134", "utm": "ads", "stage": "sql"}, 0},
		{"remote holds the earlier of two writes with lost answers: ours, overwritten", map[string]string{"firstName": "Jane", "stage": "mql"}, true,
			map[string]string{"firstName": "Jane", "stage": "engaged"}, Doubt{"stage": {"mql", "opportunity"}},
			map[string]string{"phone": "+14155550134", "utm": "ads", "stage": "sql"}, 0},
		{"remote holds neither our last nor the in-doubt value: an edit", map[string]string{"firstName": "Jane", "stage": "customer"}, true,
			map[string]string{"firstName": "Jane", "stage": "engaged"}, Doubt{"stage": {"mql"}},
			map[string]string{"phone": "+14155550134", "utm": "ads"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := planWrites(wants, tc.remote, tc.exists, tc.prev, tc.doubt)
			if len(p.writes) != len(tc.writes) || len(p.conflicts) != tc.conflicts {
				t.Fatalf("writes %v conflicts %v, want %v and %d conflicts", p.writes, p.conflicts, tc.writes, tc.conflicts)
			}
			for k, v := range tc.writes {
				if p.writes[k] != v || p.written[k] != v {
					t.Errorf("write %s = %q (written %q), want %q", k, p.writes[k], p.written[k], v)
				}
			}
		})
	}
}

func TestHubSpotExistingID(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"Contact already exists. Existing ID: 37765128953": "37765128953",
		"contact already exists. existing id:12":           "12",
		"Existing ID: abc":                                 "",
		"":                                                 "",
	}
	for in, want := range tests {
		if got := hsExistingID(in); got != want {
			t.Errorf("hsExistingID(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzClassifyStatus(f *testing.F) {
	f.Add(429, "30", []byte(`{"message":"x"}`))
	f.Add(400, "", []byte(`{"statusCode":400,"meta":{"contactId":"a"}}`))
	f.Add(409, "", []byte(`{"message":"Existing ID: 5"}`))
	f.Add(422, "Sat, 31 Oct 2026 08:00:10 GMT", []byte(`{"message":["a",1,null]}`))
	f.Fuzz(func(t *testing.T, status int, retryAfter string, body []byte) {
		if status < 100 || status > 999 {
			return
		}
		e := classifyStatus(status, http.Header{"Retry-After": {retryAfter}}, body)
		if e.Class < RateLimited || e.Class > NotFound {
			t.Fatalf("class %v out of range", e.Class)
		}
		if e.RetryAfter < 0 || len(e.Message) > maxMessageLen+len("…") {
			t.Fatalf("retry %v message length %d", e.RetryAfter, len(e.Message))
		}
	})
}

func FuzzFlexString(f *testing.F) {
	for _, s := range []string{`"12"`, `12`, `null`, `1e3`, `true`, `{}`, `"\u00e9"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v flexString
		_ = v.UnmarshalJSON(b) // must not panic; errors are fine
	})
}

func TestDoubtKeepsEveryValueOfFailedWritesInARow(t *testing.T) {
	t.Parallel()
	var d Doubt
	d = d.With(map[string]string{"stage": "mql", "budget": "100"})
	d = d.With(map[string]string{"stage": "sql"})
	d = d.With(map[string]string{"stage": "mql"}) // resent: kept once, now the newest
	if got := d["stage"]; !slices.Equal(got, []string{"sql", "mql"}) {
		t.Errorf("stage in doubt = %v, want [sql mql]", got)
	}
	for _, v := range []string{"sql", " mql", "mql"} {
		if !d.Sent("stage", v) {
			t.Errorf("%q was sent and is not recognized", v)
		}
	}
	if d.Sent("stage", "customer") || d.Sent("phone", "") {
		t.Error("a value never sent is taken for leadgate's own")
	}
	for i := range 2 * doubtDepth {
		d = d.With(map[string]string{"budget": strconv.Itoa(200 + i)})
	}
	if n := len(d["budget"]); n != doubtDepth {
		t.Errorf("budget keeps %d values after %d failed writes, want the last %d", n, 2*doubtDepth+1, doubtDepth)
	}
	if d.Sent("budget", "100") || !d.Sent("budget", strconv.Itoa(200+2*doubtDepth-1)) {
		t.Error("the bound drops the newest values instead of the oldest")
	}
}
