package normalize

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/nyaruka/phonenumbers"
)

// A number's validity does not depend on which region is checked first: for every region libphonenumber
// knows, its example numbers of every type, and numbers near them, are valid or not exactly as
// IsValidNumber says.
func TestValidityIsLibphonenumbersInEveryRegion(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	types := []phonenumbers.PhoneNumberType{phonenumbers.FIXED_LINE, phonenumbers.MOBILE, phonenumbers.TOLL_FREE,
		phonenumbers.PREMIUM_RATE, phonenumbers.SHARED_COST, phonenumbers.VOIP, phonenumbers.PERSONAL_NUMBER,
		phonenumbers.PAGER, phonenumbers.UAN, phonenumbers.VOICEMAIL}
	checked := 0
	for region := range phonenumbers.GetSupportedRegions() {
		for _, typ := range types {
			ex := phonenumbers.GetExampleNumberForType(region, typ)
			if ex == nil {
				continue
			}
			national := strconv.FormatUint(ex.GetNationalNumber(), 10)
			for _, nsn := range append([]string{national}, neighbours(rng, national, 8)...) {
				num, err := phonenumbers.Parse("+"+strconv.Itoa(int(ex.GetCountryCode()))+nsn, region)
				if err != nil {
					continue
				}
				for _, asked := range []string{region, phonenumbers.GetRegionCodeForCountryCode(int(ex.GetCountryCode())), "US"} {
					if got, want := isValid(num, asked), phonenumbers.IsValidNumber(num); got != want {
						t.Errorf("+%d %s with region %s: valid = %v, libphonenumber says %v", ex.GetCountryCode(), nsn, asked, got, want)
					}
					checked++
				}
			}
		}
	}
	if checked < 10000 {
		t.Fatalf("checked %d numbers; the regions' example numbers should give far more", checked)
	}
}

// neighbours are n numbers like nsn: one digit changed, a digit added or one dropped.
func neighbours(rng *rand.Rand, nsn string, n int) []string {
	out := make([]string, 0, n)
	for range n {
		b := []byte(nsn)
		i := rng.IntN(len(b))
		d := byte('0' + rng.IntN(10))
		switch rng.IntN(3) {
		case 0:
			b[i] = d
		case 1:
			b = append(b[:i], append([]byte{d}, b[i:]...)...)
		default:
			if len(b) > 1 {
				b = append(b[:i], b[i+1:]...)
			}
		}
		out = append(out, string(b))
	}
	return out
}

// FuzzValidityIsLibphonenumbers checks the same on arbitrary digits and regions.
func FuzzValidityIsLibphonenumbers(f *testing.F) {
	f.Add("4155550134", "US")
	f.Add("+14165550134", "CA")
	f.Add("+12685551234", "US")
	f.Add("+447911123456", "GB")
	f.Add("+77012345678", "RU")
	f.Add("015112345678", "DE")
	f.Fuzz(func(t *testing.T, digits, region string) {
		num, err := phonenumbers.Parse(digits, region)
		if err != nil {
			return
		}
		if got, want := isValid(num, region), phonenumbers.IsValidNumber(num); got != want {
			t.Fatalf("Parse(%q, %q): valid = %v, libphonenumber says %v", digits, region, got, want)
		}
	})
}
