package secretbox

import "testing"

func TestSealOpenRoundTrip(t *testing.T) {
	b, err := New("a long operator secret key")
	if err != nil {
		t.Fatal(err)
	}
	for _, plain := range []string{"whsec_abc", "ünïcode ✓", string(make([]byte, 4096))} {
		sealed, err := b.Seal(plain)
		if err != nil {
			t.Fatal(err)
		}
		if string(sealed) == plain {
			t.Fatal("ciphertext equals plaintext")
		}
		got, err := b.Open(sealed)
		if err != nil || got != plain {
			t.Fatalf("Open = %q, %v; want %q", got, err, plain)
		}
	}
}

func TestEmptySecretSealsToNothing(t *testing.T) {
	b, _ := New("k-0123456789abcdef")
	sealed, err := b.Seal("")
	if err != nil || sealed != nil {
		t.Fatalf("Seal(\"\") = %v, %v; want nil, nil", sealed, err)
	}
	if got, err := b.Open(nil); got != "" || err != nil {
		t.Fatalf("Open(nil) = %q, %v", got, err)
	}
}

func TestWrongKeyOrTamperingIsRefused(t *testing.T) {
	a, _ := New("key-number-one-0123")
	b, _ := New("key-number-two-0123")
	sealed, _ := a.Seal("secret")
	if _, err := b.Open(sealed); err == nil {
		t.Fatal("a different key opened the secret")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := a.Open(sealed); err == nil {
		t.Fatal("a tampered ciphertext opened")
	}
	if _, err := a.Open([]byte{9, 1, 2}); err == nil {
		t.Fatal("garbage opened")
	}
}

func TestSealIsRandomized(t *testing.T) {
	b, _ := New("k-0123456789abcdef")
	x, _ := b.Seal("same")
	y, _ := b.Seal("same")
	if string(x) == string(y) {
		t.Fatal("two seals of one secret are identical (nonce reuse)")
	}
}
