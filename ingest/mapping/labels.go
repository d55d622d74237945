package mapping

import (
	"strings"
	"unicode"

	"github.com/tidwall/gjson"
)

// role is what a form question or data key holds, guessed from its label, ref or key.
type role int

const (
	roleOther role = iota
	roleEmail
	rolePhone
	roleFirstName
	roleLastName
	roleFullName
	roleCompany
)

// labelRole guesses the role of a labelled value ("First name", "firstName", "your_email", "Company
// name", "Mobile phone"). The order of the checks matters: "email address" is not a name, "company
// name" is a company, "first name" is not a full name.
func labelRole(label string) role {
	w := " " + labelWords(label) + " "
	switch {
	case hasAny(w, " email ", " e mail ", " mail "):
		return roleEmail
	case hasAny(w, " phone ", " mobile ", " cell ", " tel ", " telephone ", " whatsapp ", " phonenumber ", " mobilephone "):
		return rolePhone
	case hasAny(w, " first name ", " firstname ", " given name ", " fname ", " forename ") || w == " first ":
		return roleFirstName
	case hasAny(w, " last name ", " lastname ", " surname ", " family name ", " lname ") || w == " last ":
		return roleLastName
	case hasAny(w, " company ", " companyname ", " organization ", " organisation ", " business ", " employer ", " orgname "):
		return roleCompany
	case hasAny(w, " name ", " fullname ", " full name "):
		if hasAny(w, " user name ", " username ", " file name ", " form name ", " campaign name ") {
			return roleOther
		}
		return roleFullName
	}
	return roleOther
}

func hasAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// labelWords lower-cases label and splits it into space-separated words at punctuation and at
// camelCase boundaries ("firstName" → "first name", "E-mail Address" → "e mail address").
func labelWords(label string) string {
	var b strings.Builder
	prevLower := false
	for _, r := range label {
		switch {
		case unicode.IsUpper(r):
			if prevLower {
				b.WriteByte(' ')
			}
			b.WriteRune(unicode.ToLower(r))
			prevLower = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
			prevLower = true
		default:
			b.WriteByte(' ')
			prevLower = false
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// assignByRole puts a labelled value into the item field its label suggests, unless that field is
// already set (the first, usually typed, match wins). It reports whether the value was used. Values
// that cannot be what the label says (an "email consent" checkbox) are left for the caller.
func assignByRole(it *Item, label string, v gjson.Result) bool {
	s := text(v)
	if strings.TrimSpace(s) == "" {
		return false
	}
	switch labelRole(label) {
	case roleEmail:
		if it.Email == "" && strings.Contains(s, "@") {
			it.Email = s
			return true
		}
	case rolePhone:
		if it.Phone == "" && strings.ContainsAny(s, "0123456789") && v.Type != gjson.True && v.Type != gjson.False {
			it.Phone = s
			return true
		}
	case roleFirstName:
		if it.FirstName == "" {
			it.FirstName = s
			return true
		}
	case roleLastName:
		if it.LastName == "" {
			it.LastName = s
			return true
		}
	case roleFullName:
		if it.FirstName == "" && it.LastName == "" {
			it.FirstName, it.LastName = splitName(s)
			return true
		}
	case roleCompany:
		if it.Company == "" {
			it.Company = s
			return true
		}
	}
	return false
}

// isAttributionKey reports whether a key names marketing attribution rather than lead data.
func isAttributionKey(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "gclid", "fbclid", "msclkid", "ttclid", "li_fat_id", "wbraid", "gbraid", "referrer", "landing_page", "campaign", "campaign_id", "ad_id", "adset_id", "form_id":
		return true
	}
	return strings.HasPrefix(k, "utm_")
}
