// Package secretbox encrypts secrets at rest (source signing secrets, CRM tokens)
// with AES-256-GCM under a key derived from LEADGATE_SECRET_KEY.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// version prefixes every ciphertext so the scheme can change without ambiguity.
const version byte = 1

// Box seals and opens secrets. The zero value is not usable; use New.
type Box struct{ aead cipher.AEAD }

// New derives the encryption key from the operator's secret key with HKDF, so a
// passphrase-like key still yields a uniform 256-bit key.
func New(secretKey string) (*Box, error) {
	if secretKey == "" {
		return nil, errors.New("secretbox: empty secret key")
	}
	key, err := hkdf.Key(sha256.New, []byte(secretKey), nil, "leadgate secretbox v1", 32)
	if err != nil {
		return nil, fmt.Errorf("secretbox: derive key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secretbox: cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secretbox: gcm: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext; an empty plaintext seals to nil (no secret stored).
func (b *Box) Seal(plaintext string) ([]byte, error) {
	if plaintext == "" {
		return nil, nil
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("secretbox: nonce: %w", err)
	}
	out := append([]byte{version}, nonce...)
	return b.aead.Seal(out, nonce, []byte(plaintext), []byte{version}), nil
}

// Open decrypts what Seal produced; nil opens to "".
func (b *Box) Open(sealed []byte) (string, error) {
	if len(sealed) == 0 {
		return "", nil
	}
	ns := b.aead.NonceSize()
	if len(sealed) < 1+ns || sealed[0] != version {
		return "", errors.New("secretbox: not a sealed secret")
	}
	pt, err := b.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], []byte{version})
	if err != nil {
		return "", fmt.Errorf("secretbox: open (wrong LEADGATE_SECRET_KEY?): %w", err)
	}
	return string(pt), nil
}
