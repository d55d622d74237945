package crm

import (
	"strconv"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/leadgate/leadgate/ingest/normalize"
)

// CRMs store a phone as it was typed: "(415) 555-0134", "415-555-0134", "+1 415 555 0134". leadgate holds
// E.164, so a lookup by phone must try the forms a person may have typed, and a remote phone is ours when
// it reads as the same number in our number's region.

// PhoneForms returns the stored forms a CRM may hold for an E.164 number, most likely first: E.164 itself,
// the international and national formats, and their digit-only and dashed/dotted variants. It returns nil
// for a value that is not a valid E.164 number.
func PhoneForms(e164 string) []string {
	num, err := phonenumbers.Parse(e164, "")
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return nil
	}
	national := phonenumbers.Format(num, phonenumbers.NATIONAL)
	international := phonenumbers.Format(num, phonenumbers.INTERNATIONAL)
	nsn := phonenumbers.GetNationalSignificantNumber(num)
	cc := phonenumbers.GetCountryCodeForRegion(phonenumbers.GetRegionCodeForNumber(num))
	if cc == 0 {
		cc = int(num.GetCountryCode())
	}
	ccs := strconv.Itoa(cc)
	nationalDigits := digits(national) // keeps a national trunk prefix ("030 …" in Germany)
	forms := []string{
		e164,
		international,
		national,
		nationalDigits,
		nsn,
		ccs + nsn,
		"+" + ccs + " " + nsn,
		strings.NewReplacer("(", "", ") ", "-", " ", "-").Replace(national),
		strings.NewReplacer("(", "", ") ", ".", " ", ".", "-", ".").Replace(national),
		strings.NewReplacer("(", "", ")", "").Replace(national),
		"+" + ccs + " " + national,
		strings.ReplaceAll(international, " ", "-"),
	}
	seen := make(map[string]bool, len(forms))
	out := forms[:0]
	for _, f := range forms {
		if f = strings.TrimSpace(f); f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// samePhone reports whether a remote phone, in whatever form it is stored, is the same number as our
// E.164 phone. A remote phone without a country code is read in our number's region.
func samePhone(remote, ours string) bool {
	remote = strings.TrimSpace(remote)
	if ours == "" || remote == "" {
		return false
	}
	if digits(remote) == digits(ours) {
		return true
	}
	region := "US"
	if num, err := phonenumbers.Parse(ours, ""); err == nil {
		if r := phonenumbers.GetRegionCodeForNumber(num); r != "" {
			region = r
		}
	}
	v := normalize.Phone(remote, region)
	return v.Valid && v.Value == ours
}
