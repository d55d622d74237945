package normalize

import "testing"

func TestName(t *testing.T) {
	t.Parallel()
	tests := []struct{ raw, want string }{
		{"jANE o'neil-smith", "Jane O'Neil-Smith"},
		{"josé", "José"},
		{"  mary   ann\t lee ", "Mary Ann Lee"},
		{"ÉLODIE d’angelo", "Élodie D’Angelo"},
		{"STRAßE", "Straße"},
		{"łukasz żółć", "Łukasz Żółć"},
		{"ΑΝΝΑ", "Αννα"},
		{"jose\u0301", "Jose\u0301"},
		{"3rd", "3rd"},
		{"\u01c6emal", "\u01c5emal"},
		{"", ""},
		{"   ", ""},
		{"jane\x00doe", "Janedoe"},
		{"bad\xffbyte", "Badbyte"},
		{"李 小龍", "李 小龍"},
	}
	for _, tt := range tests {
		if got := Name(tt.raw); got != tt.want {
			t.Errorf("Name(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}
