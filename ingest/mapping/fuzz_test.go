package mapping

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/tidwall/gjson"

	"github.com/leadgate/leadgate/ingest/normalize"
)

// fuzzContentTypes are the content types the fuzzer picks from by index.
var fuzzContentTypes = []string{jsonCT, formCT, "", "text/plain", "application/json; charset=utf-8", "multipart/form-data; boundary=x"}

// FuzzMapNormalize drives Map and the normalizers over arbitrary bodies for every preset and checks
// that nothing panics and the invariants hold: the only error is *MalformedError; every item has
// non-nil maps and JSON Raw without secrets; a valid email is trimmed lower-case; a valid phone is
// E.164; Name is idempotent.
func FuzzMapNormalize(f *testing.F) {
	kinds := Presets()
	var entries []os.DirEntry
	var dirs []string
	for _, dir := range []string{"testdata", filepath.Join("testdata", "published")} {
		list, err := os.ReadDir(dir)
		if err != nil {
			f.Fatalf("read %s: %v", dir, err)
		}
		for _, e := range list {
			if !e.IsDir() {
				entries, dirs = append(entries, e), append(dirs, dir)
			}
		}
	}
	for n, e := range entries {
		body, err := os.ReadFile(filepath.Join(dirs[n], e.Name()))
		if err != nil {
			f.Fatalf("read fixture: %v", err)
		}
		kind := strings.TrimSuffix(strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())), "-dialfailed")
		for i, k := range kinds {
			if strings.HasPrefix(kind, k) {
				ct := 0
				if strings.HasSuffix(e.Name(), ".txt") {
					ct = 1
				}
				f.Add(uint8(i), uint8(ct), body, "")
			}
		}
	}
	index := func(kind string) uint8 { return uint8(slices.Index(kinds, kind)) }
	f.Add(index(kindHubSpot), uint8(0), []byte(strings.Repeat("[", 40)), "")
	f.Add(index(kindToken), uint8(0), []byte(`{"email":" A@B.CO ","phone":"004915112345678","name":"jANE o'neil"}`), "DE")
	f.Add(index(kindActiveCampaign), uint8(1), []byte("contact[email]=x%40y.z&contact[phone]=12345678901234567890"), "")

	f.Fuzz(func(t *testing.T, kindIdx, ctIdx uint8, body []byte, region string) {
		kind := kinds[int(kindIdx)%len(kinds)]
		ct := fuzzContentTypes[int(ctIdx)%len(fuzzContentTypes)]
		items, err := Map(kind, Overrides{}, ct, http.Header{}, body)
		if err != nil {
			var me *MalformedError
			if !errors.As(err, &me) {
				t.Fatalf("Map(%s) returned a non-malformed error: %v", kind, err)
			}
			return
		}
		for _, it := range items {
			if it.Fields == nil || it.Attribution == nil {
				t.Fatalf("nil maps in %+v", it)
			}
			if !json.Valid(it.Raw) {
				t.Fatalf("Raw is not JSON: %q", it.Raw)
			}
			if gjson.GetBytes(it.Raw, "secret_key").Exists() && gjson.ParseBytes(it.Raw).IsObject() && kind != kindHubSpot && kind != kindFacebookLeads {
				t.Fatalf("Raw keeps secret_key: %s", it.Raw)
			}
			if _, ok := it.Fields["secret_key"]; ok {
				t.Fatal("Fields keeps secret_key")
			}
			checkNormalized(t, it, region)
		}
	})
}

func checkNormalized(t *testing.T, it Item, region string) {
	t.Helper()
	for _, raw := range []string{it.Email, it.FirstName + "@" + it.Company} {
		e := normalize.Email(raw)
		if e.Valid != (e.Value != "") || e.Raw != raw {
			t.Fatalf("Email(%q) = %+v: Valid and Value disagree or Raw changed", raw, e)
		}
		if e.Valid && (e.Value != strings.ToLower(e.Value) || e.Value != strings.TrimSpace(e.Value) || strings.ContainsFunc(e.Value, unicode.IsSpace)) {
			t.Fatalf("Email(%q) valid but not trimmed lower-case: %q", raw, e.Value)
		}
		if !e.Valid && e.Problem == "" {
			t.Fatalf("Email(%q) invalid without a problem", raw)
		}
	}
	for _, raw := range []string{it.Phone, it.DeliveryID} {
		p := normalize.Phone(raw, region)
		if p.Valid != (p.Value != "") || p.Raw != raw {
			t.Fatalf("Phone(%q) = %+v: Valid and Value disagree or Raw changed", raw, p)
		}
		if p.Valid && (!strings.HasPrefix(p.Value, "+") || len(p.Value) > 16 || strings.IndexFunc(p.Value[1:], func(r rune) bool { return r < '0' || r > '9' }) >= 0) {
			t.Fatalf("Phone(%q, %q) valid but not E.164: %q", raw, region, p.Value)
		}
		if !p.Valid && p.Problem == "" {
			t.Fatalf("Phone(%q) invalid without a problem", raw)
		}
	}
	for _, raw := range []string{it.FirstName, it.LastName} {
		n := normalize.Name(raw)
		if again := normalize.Name(n); again != n {
			t.Fatalf("Name not idempotent: %q → %q → %q", raw, n, again)
		}
	}
}

// FuzzMembersFindWhatGetFinds checks that reading an object's members once finds, for every name the
// default mapping reads, the same value gjson's Get finds: repeated, escaped and nested names included.
func FuzzMembersFindWhatGetFinds(f *testing.F) {
	f.Add(`{"email":"a@b.co","email":"b@b.co","ph\u006fne":"1","fields":{"email":"x"}}`)
	f.Add(`{"utm_source":null,"name":"A B","type":1.5e3,"consent":true}`)
	f.Add(`{}`)
	f.Add(`[{"email":"a@b.co"}]`)
	f.Add(`"email"`)
	names := []string{"event_type", "eventType", "event", "type", "occurred_at", "occurredAt", "timestamp",
		"created_at", "email", "email_address", "phone", "phone_number", "mobile", "first_name", "firstName",
		"last_name", "lastName", "full_name", "fullName", "name", "company", "company_name", "companyName",
		"target_stage", "current_stage", "fields", "phone_verified", "consent", "attribution", "utm_source"}
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) {
			return
		}
		doc := gjson.Parse(body)
		ms := readMembers(doc)
		for _, name := range names {
			want, got := doc.Get(name), ms.get(name)
			if got.Raw != want.Raw || got.Type != want.Type {
				t.Fatalf("%q in %s: members found %q, Get %q", name, body, got.Raw, want.Raw)
			}
		}
	})
}
