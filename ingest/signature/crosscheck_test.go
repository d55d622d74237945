package signature

import (
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stripe/stripe-go/v82/webhook"
)

// The reference libraries read the wall clock, so these tests use time.Now().

func TestStripeMatchesStripeGo(t *testing.T) {
	const secret = "whsec_test_secret_used_raw"
	body := []byte(`{"id":"evt_1","object":"event","api_version":"2025-06-30.basil","type":"checkout.session.completed"}`)
	now := time.Now()
	cfg := Config{Secrets: []string{secret}}

	t.Run("stripe-go signs, we verify", func(t *testing.T) {
		signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: now})
		req := jsonRequest(hookURL, string(body))
		req.Header.Set("Stripe-Signature", signed.Header)
		assertReason(t, Verify(KindStripe, cfg, req, now), "")
	})
	t.Run("we sign, stripe-go verifies", func(t *testing.T) {
		req := jsonRequest(hookURL, string(body))
		if err := Sign(KindStripe, SignConfig{Config: cfg}, &req, now); err != nil {
			t.Fatal(err)
		}
		header := req.Header.Get("Stripe-Signature")
		if err := webhook.ValidatePayload(body, header, secret); err != nil {
			t.Fatalf("stripe-go ValidatePayload: %v", err)
		}
		if _, err := webhook.ConstructEventWithOptions(body, header, secret,
			webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true}); err != nil {
			t.Fatalf("stripe-go ConstructEventWithOptions: %v", err)
		}
	})
	t.Run("both agree a stale header is stale", func(t *testing.T) {
		signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: now.Add(-10 * time.Minute)})
		if err := webhook.ValidatePayload(body, signed.Header, secret); err == nil {
			t.Fatal("stripe-go accepted a stale header")
		}
		req := jsonRequest(hookURL, string(body))
		req.Header.Set("Stripe-Signature", signed.Header)
		assertReason(t, Verify(KindStripe, cfg, req, now), "tolerance")
	})
	t.Run("rolled secret: every v1 is tried against every secret", func(t *testing.T) {
		old := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: "whsec_old", Timestamp: now})
		cur := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: "whsec_new", Timestamp: now})
		// Stripe sends one t= and several v1= during a roll, plus v0 noise.
		header := old.Header + ",v1=" + strings.SplitN(cur.Header, "v1=", 2)[1] + ",v0=deadbeef"
		req := jsonRequest(hookURL, string(body))
		req.Header.Set("Stripe-Signature", header)
		assertReason(t, Verify(KindStripe, Config{Secrets: []string{"whsec_new"}}, req, now), "")
		assertReason(t, Verify(KindStripe, Config{Secrets: []string{"whsec_other", "whsec_old"}}, req, now), "")
		assertReason(t, Verify(KindStripe, Config{Secrets: []string{"whsec_other"}}, req, now), "signature mismatch")
	})
	t.Run("a v0 signature alone is not accepted", func(t *testing.T) {
		signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: now, Scheme: "v0"})
		req := jsonRequest(hookURL, string(body))
		req.Header.Set("Stripe-Signature", signed.Header)
		assertReason(t, Verify(KindStripe, cfg, req, now), "no v1 signature")
	})
}

func TestStandardWebhooksMatchesReferenceLibrary(t *testing.T) {
	secret, err := NewSecret(KindStandardWebhooks)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("reference library rejects our secret: %v", err)
	}
	body := []byte(leadJSON)
	now := time.Now()
	cfg := Config{Secrets: []string{secret}}

	t.Run("reference signs, we verify", func(t *testing.T) {
		sig, err := ref.Sign("msg_1", now, body)
		if err != nil {
			t.Fatal(err)
		}
		req := jsonRequest(hookURL, string(body))
		req.Header.Set("webhook-id", "msg_1")
		req.Header.Set("webhook-timestamp", itoa(now.Unix()))
		req.Header.Set("webhook-signature", sig)
		assertReason(t, Verify(KindStandardWebhooks, cfg, req, now), "")
	})
	t.Run("we sign, reference verifies", func(t *testing.T) {
		req := jsonRequest(hookURL, string(body))
		if err := Sign(KindStandardWebhooks, SignConfig{Config: cfg, DeliveryID: "msg_2"}, &req, now); err != nil {
			t.Fatal(err)
		}
		if got := req.Header.Get("webhook-id"); got != "msg_2" {
			t.Fatalf("webhook-id = %q, want msg_2", got)
		}
		if err := ref.Verify(body, req.Header); err != nil {
			t.Fatalf("reference Verify: %v", err)
		}
	})
	t.Run("Sign generates a delivery id when none is given", func(t *testing.T) {
		req := jsonRequest(hookURL, string(body))
		if err := Sign(KindStandardWebhooks, SignConfig{Config: cfg}, &req, now); err != nil {
			t.Fatal(err)
		}
		if id := req.Header.Get("webhook-id"); !strings.HasPrefix(id, "msg_") {
			t.Fatalf("webhook-id = %q, want a msg_ id", id)
		}
		if err := ref.Verify(body, req.Header); err != nil {
			t.Fatalf("reference Verify: %v", err)
		}
	})
	t.Run("svix-* headers are accepted as a fallback", func(t *testing.T) {
		sig, _ := ref.Sign("msg_3", now, body)
		req := jsonRequest(hookURL, string(body))
		req.Header.Set("svix-id", "msg_3")
		req.Header.Set("svix-timestamp", itoa(now.Unix()))
		req.Header.Set("svix-signature", sig)
		assertReason(t, Verify(KindStandardWebhooks, cfg, req, now), "")
	})
	t.Run("the signature list is searched, other versions skipped", func(t *testing.T) {
		other, _ := NewSecret(KindStandardWebhooks)
		otherRef, _ := standardwebhooks.NewWebhook(other)
		sigOther, _ := otherRef.Sign("msg_4", now, body)
		sigOurs, _ := ref.Sign("msg_4", now, body)
		req := jsonRequest(hookURL, string(body))
		req.Header.Set("webhook-id", "msg_4")
		req.Header.Set("webhook-timestamp", itoa(now.Unix()))
		req.Header.Set("webhook-signature", "v1a,hnO3AAAA== garbage "+sigOther+"  "+sigOurs)
		assertReason(t, Verify(KindStandardWebhooks, cfg, req, now), "")
		// Rotation on our side: the sender still signs with the old secret only.
		req.Header.Set("webhook-signature", sigOther)
		assertReason(t, Verify(KindStandardWebhooks, Config{Secrets: []string{secret, other}}, req, now), "")
	})
	t.Run("a v1a (ed25519) entry alone is not accepted", func(t *testing.T) {
		req := jsonRequest(hookURL, string(body))
		req.Header.Set("webhook-id", "msg_5")
		req.Header.Set("webhook-timestamp", itoa(now.Unix()))
		req.Header.Set("webhook-signature", "v1a,"+strings.Repeat("A", 86)+"==")
		assertReason(t, Verify(KindStandardWebhooks, cfg, req, now), "no v1 signature")
	})
	t.Run("missing id or timestamp is rejected", func(t *testing.T) {
		for _, h := range []string{"webhook-id", "webhook-timestamp"} {
			req := jsonRequest(hookURL, string(body))
			if err := Sign(KindStandardWebhooks, SignConfig{Config: cfg}, &req, now); err != nil {
				t.Fatal(err)
			}
			req.Header.Del(h)
			assertReason(t, Verify(KindStandardWebhooks, cfg, req, now), "missing header "+h)
		}
	})
	t.Run("non-canonical header keys are found", func(t *testing.T) {
		sig, _ := ref.Sign("msg_6", now, body)
		req := Request{Body: body, Header: http.Header{
			"webhook-id": {"msg_6"}, "webhook-timestamp": {itoa(now.Unix())}, "webhook-signature": {sig},
		}}
		assertReason(t, Verify(KindStandardWebhooks, cfg, req, now), "")
	})
}
