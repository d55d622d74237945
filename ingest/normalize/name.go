package normalize

import (
	"strings"
	"unicode"
)

// Name trims raw, collapses runs of whitespace to one space and title-cases each word: the first letter
// and every letter following an apostrophe or hyphen are upper-cased, the rest lower-cased, with Unicode
// case rules ("jANE o'neil-smith" → "Jane O'Neil-Smith", "josé" → "José"). Invalid UTF-8 bytes and control
// characters are removed.
func Name(raw string) string {
	s := strings.ToValidUTF8(raw, "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = titleWord(w)
	}
	return strings.Join(words, " ")
}

func titleWord(w string) string {
	var b strings.Builder
	b.Grow(len(w))
	upperNext := true
	for _, r := range w {
		switch {
		case unicode.IsLetter(r) && upperNext:
			b.WriteRune(unicode.ToTitle(r))
			upperNext = false
		case unicode.IsLetter(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
			upperNext = startsNamePart(r)
		}
	}
	return b.String()
}

// startsNamePart reports whether the letter after r begins a new part of a name: O'Neil, Smith-Jones,
// D’Angelo (typographic apostrophe), Jean.Luc.
func startsNamePart(r rune) bool {
	switch r {
	case '\'', '’', 'ʼ', '-', '‐', '.', '(', '"':
		return true
	}
	return false
}
