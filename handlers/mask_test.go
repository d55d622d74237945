package handlers

import (
	"strings"
	"testing"
)

func TestMaskPersonalHidesPersonalValuesAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in   string
		gone, kept []string
	}{
		{"generic lead", `{"email":"Jane@Example.com","phone":"(415) 555-0134","first_name":"Jane","last_name":"Doe","event_type":"form_submitted","fields":{"budget":"10k"}}`,
			[]string{"Jane@Example.com", "555-0134", `"Jane"`, "Doe"}, []string{"form_submitted", "10k"}},
		{"typeform answers under innocent keys", `{"form_response":{"answers":[{"type":"email","email":"a@b.io"},{"type":"text","text":"call me at +1 212 555 0199"}]}}`,
			[]string{"a@b.io", "555 0199"}, []string{`"type":"email"`}},
		{"retell numbers", `{"call":{"from_number":"+12137771234","to_number":"+14155550134","duration_ms":90000}}`,
			[]string{"+12137771234", "+14155550134"}, []string{"90000"}},
		{"not JSON is withheld", `contact[email]=a@b.io`, []string{"a@b.io"}, []string{"masked"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := string(maskPersonal([]byte(c.in)))
			for _, g := range c.gone {
				if strings.Contains(got, g) {
					t.Errorf("%q survived masking: %s", g, got)
				}
			}
			for _, k := range c.kept {
				if !strings.Contains(got, k) {
					t.Errorf("%q was lost: %s", k, got)
				}
			}
		})
	}
}
