// Package mapping turns the raw body of a webhook delivery into lead items, one per event it carries,
// using a preset per source kind (Stripe, Typeform, Meta lead ads, HubSpot, …) that an operator can
// adjust with per-source JSON path overrides.
//
// Mapping only finds values; it does not judge them. Identity values come out as found and are
// normalized later (package normalize), and a payload without an email or phone still maps: whether it
// is a lead is decided downstream.
package mapping
