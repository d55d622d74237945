package ingest

import (
	"testing"
	"time"

	"github.com/leadgate/leadgate/ingest/mapping"
	"github.com/leadgate/leadgate/models"
)

// BenchmarkIdempotencyKey measures the two kinds of key ingest computes per event: a provider delivery id
// (a string join) and a content hash over the normalized lead (sha-256 of the dedupe fields).
func BenchmarkIdempotencyKey(b *testing.B) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	l := leadFor(b, mapping.Item{Email: "Jane@Example.com", Phone: "(415) 555-0134", EventType: "form_submitted",
		OccurredAt: now.Add(-time.Minute)}, models.SourceConfig{DefaultRegion: "US"}, now)
	b.Run("provider_id", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if k, _ := idempotencyKey("stripe", "evt_1NqG2k2eZvKYlo2C", 1, 2, nil, l); k == "" {
				b.Fatal("empty key")
			}
		}
	})
	b.Run("content_hash", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if k, w := idempotencyKey("token", "", 1, 2, nil, l); !w || k == "" {
				b.Fatal("want a windowed content key")
			}
		}
	})
}
