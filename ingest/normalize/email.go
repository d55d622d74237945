package normalize

import (
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Length limits from RFC 5321 (path 256 minus the angle brackets) and RFC 1035.
const (
	maxEmailLen  = 254
	maxLocalLen  = 64
	maxDomainLen = 253
	maxLabelLen  = 63
)

// Email trims and lower-cases raw and checks that it is a plain, deliverable-looking address:
// exactly one @, a local part net/mail accepts unquoted and without comments, a domain of at least two
// dot-separated labels (letters, digits, hyphens; non-ASCII letters are kept so IDN domains work), a
// non-numeric top-level label, no spaces, and the RFC length limits. A leading "mailto:" is removed.
func Email(raw string) Value {
	s := strings.TrimSpace(raw)
	if s == "" {
		return invalid(raw, problemEmpty)
	}
	if !utf8.ValidString(s) {
		return invalid(raw, "not valid UTF-8")
	}
	if len(s) > len("mailto:") && strings.EqualFold(s[:len("mailto:")], "mailto:") {
		s = strings.TrimSpace(s[len("mailto:"):])
	}
	s = strings.ToLower(s)
	if problem := emailProblem(s); problem != "" {
		return invalid(raw, problem)
	}
	return Value{Value: s, Raw: raw, Valid: true}
}

func emailProblem(s string) string {
	if len(s) > maxEmailLen {
		return "too long"
	}
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "contains spaces or control characters"
	}
	if strings.Count(s, "@") != 1 {
		return "must contain exactly one @"
	}
	local, domain, _ := strings.Cut(s, "@")
	switch {
	case local == "":
		return "missing the part before @"
	case len(local) > maxLocalLen:
		return "part before @ too long"
	case domain == "":
		return "missing domain"
	}
	if problem := domainProblem(domain); problem != "" {
		return problem
	}
	// net/mail enforces the RFC 5322 atom rules (no leading, trailing or doubled dots, no specials); an
	// address it rewrites (quotes, comments) is not a plain address and is refused.
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s || addr.Name != "" {
		return "not a valid address"
	}
	return ""
}

func domainProblem(domain string) string {
	if len(domain) > maxDomainLen {
		return "domain too long"
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return "domain has no dot"
	}
	for _, label := range labels {
		switch {
		case label == "":
			return "domain has an empty label"
		case len(label) > maxLabelLen:
			return "domain label too long"
		case label[0] == '-' || label[len(label)-1] == '-':
			return "domain label starts or ends with a hyphen"
		}
		for _, r := range label {
			if r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
				return "domain contains an invalid character"
			}
		}
	}
	tld := labels[len(labels)-1]
	if utf8.RuneCountInString(tld) < 2 || strings.IndexFunc(tld, func(r rune) bool { return !unicode.IsDigit(r) }) < 0 {
		return "invalid top-level domain"
	}
	return ""
}
