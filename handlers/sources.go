package handlers

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/leadgate/leadgate/ingest"
	"github.com/leadgate/leadgate/ingest/mapping"
	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/leadgate/leadgate/models"
)

// SourceInput is the body of POST /sources (CONTRACT.md plus optional settings).
type SourceInput struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Channel string `json:"channel"`
	// Secret is required for kinds whose provider issues the secret (Stripe, Typeform...).
	Secret string `json:"secret"`
	models.SourceConfig
}

// SourceJSON is how a source is shown; secrets never leave the server here.
type SourceJSON struct {
	ID        int64               `json:"id"`
	Name      string              `json:"name"`
	Kind      string              `json:"kind"`
	Channel   string              `json:"channel"`
	IngestURL string              `json:"ingest_url"`
	Enabled   bool                `json:"enabled"`
	Config    models.SourceConfig `json:"config"`
	CreatedAt time.Time           `json:"created_at"`
}

// ValidateSource checks a source definition and returns the field at fault.
func ValidateSource(in *SourceInput, secret string) (field, msg string) {
	in.Name = strings.TrimSpace(in.Name)
	switch {
	case in.Name == "" || len(in.Name) > 200:
		return "name", "name must be 1-200 characters"
	case !signature.Known(in.Kind):
		return "kind", "unknown kind " + strconv.Quote(in.Kind) + "; one of " + strings.Join(signature.Kinds(), ", ")
	case len(in.Channel) > 64:
		return "channel", "channel must be at most 64 characters"
	}
	if in.DefaultRegion != "" {
		in.DefaultRegion = strings.ToUpper(in.DefaultRegion)
		if !phonenumbers.GetSupportedRegions()[in.DefaultRegion] {
			return "default_region", "default_region must be an ISO 3166 region code such as US or DE"
		}
	}
	if err := (mapping.Overrides{Paths: in.Mapping}).Validate(); err != nil {
		return "mapping", err.Error()
	}
	if err := signature.ValidateConfig(in.Kind, ingest.VerifyConfig(in.SourceConfig, []string{secret})); err != nil {
		return "secret", err.Error()
	}
	return "", ""
}

// RandomHex is n random bytes in hex (generated verify tokens).
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
