package normalize

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
)

// DefaultRegion is the region assumed for national-format numbers when a source has none configured.
const DefaultRegion = "US"

// maxPhoneDigits leaves room for a national trunk prefix or "00" above E.164's 15 digits; anything
// longer is not a phone number.
const maxPhoneDigits = 17

// extensionSuffix matches a trailing extension ("ext. 12", "x12", "#12", "extension 12"); it is dropped
// because a contact is identified by the line, not the desk.
var extensionSuffix = regexp.MustCompile(`(?i)[\s,;]*(?:extension|extn?\.?|x|#)\s*\d{1,7}\s*$`)

// Phone normalizes raw to E.164 ("+14155550134") with libphonenumber. National numbers are read in
// defaultRegion (an ISO 3166 code, DefaultRegion when empty); "+" and "00" international prefixes are
// understood, as is a leading "tel:". Extensions are dropped. Letters (vanity numbers, typos) are refused
// rather than translated, and numbers libphonenumber does not consider valid, or that are too long to be
// phone numbers, are flagged.
func Phone(raw, defaultRegion string) Value {
	var uncached *PhoneCache
	return uncached.Phone(raw, defaultRegion)
}

// phoneInput is what libphonenumber is asked to parse: the number's text and the region national
// numbers are read in. Two raw texts with the same input are the same number.
type phoneInput struct{ text, region string }

// readPhone prepares raw for libphonenumber, or says why it is not a phone number at all.
func readPhone(raw, defaultRegion string) (phoneInput, string) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return phoneInput{}, problemEmpty
	}
	if !utf8.ValidString(s) {
		return phoneInput{}, "not valid UTF-8"
	}
	if len(s) > len("tel:") && strings.EqualFold(s[:len("tel:")], "tel:") {
		s = s[len("tel:"):]
	}
	if strings.ContainsAny(s, "xX#") { // every extension marker has one; most numbers skip the regexp
		s = extensionSuffix.ReplaceAllString(s, "")
	}
	if strings.IndexFunc(s, unicode.IsLetter) >= 0 {
		return phoneInput{}, "contains letters"
	}
	digits := countDigits(s)
	switch {
	case digits == 0:
		return phoneInput{}, "no digits"
	case digits > maxPhoneDigits:
		return phoneInput{}, "too long"
	}
	s = compactNumber(internationalPrefix(s))
	region := strings.ToUpper(strings.TrimSpace(defaultRegion))
	if region == "" {
		region = DefaultRegion
	}
	return phoneInput{text: s, region: region}, ""
}

// parse reads the prepared number with libphonenumber; the Value has no Raw.
func (in phoneInput) parse() Value {
	num, err := phonenumbers.Parse(in.text, in.region)
	if err != nil {
		return Value{Problem: "not a phone number: " + err.Error()}
	}
	if !isValid(num, in.region) {
		return Value{Problem: "not a valid number"}
	}
	e164 := phonenumbers.Format(num, phonenumbers.E164)
	if len(e164)-1 > e164MaxDigits {
		// libphonenumber accepts some long national numbers (German ones among them) whose international
		// form has more digits than E.164 allows; no CRM or carrier takes those.
		return Value{Problem: "longer than an international (E.164) number can be"}
	}
	return Value{Value: e164, Valid: true}
}

// compactNumber drops the formatting from a number written only with ASCII digits, a leading "+" and the
// separators people write numbers with ("(415) 555-0134" → "4155550134"). libphonenumber reads both
// forms alike, but runs its regular expressions (extension, viability, country code) over every
// character: "(415) 555-0134" took 15 % fewer instructions compact, and the phone's share of ingest's
// CPU at max rate fell from 22 % to 17 %. Any other character is kept as written: "," ";" "~" and "*"
// can mark extensions or carrier codes, and libphonenumber reads non-ASCII digits itself. Text
// libphonenumber refuses as too long is kept too.
func compactNumber(s string) string {
	if len(s) > maxParsedText {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '+' && i == 0:
			b.WriteByte(c)
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '/':
		default:
			return s
		}
	}
	return b.String()
}

// isValid is phonenumbers.IsValidNumber(num), checking the default region first when it is the main
// region of the number's calling code (the United States for +1). IsValidNumber first finds the number's
// region among all those sharing its code, which for +1 means testing it against the United States'
// patterns, then tests it again against that region's; a number valid in the main region is found there
// first, so one test answers for it. Anything else takes the full check.
func isValid(num *phonenumbers.PhoneNumber, region string) bool {
	if phonenumbers.GetRegionCodeForCountryCode(int(num.GetCountryCode())) == region && phonenumbers.IsValidNumberForRegion(num, region) {
		return true
	}
	return phonenumbers.IsValidNumber(num)
}

// maxParsedText is the longest text libphonenumber parses (its MAX_INPUT_STRING_LENGTH).
const maxParsedText = 250

// e164MaxDigits is E.164's limit on the digits of an international number, country code included.
const e164MaxDigits = 15

// internationalPrefix rewrites a leading "00" (the international call prefix almost everywhere outside
// North America) to "+", so "0049…" reads as a German number whatever the default region is.
func internationalPrefix(s string) string {
	trimmed := strings.TrimLeftFunc(s, func(r rune) bool { return !unicode.IsDigit(r) && r != '+' })
	if strings.HasPrefix(trimmed, "00") {
		return "+" + trimmed[2:]
	}
	return s
}

func countDigits(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsDigit(r) {
			n++
		}
	}
	return n
}
