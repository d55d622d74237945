// Package static embeds the admin web app's stylesheet and vendored scripts
// (htmx 2.0.11 from the npm package htmx.org, BSD Zero Clause licensed, see
// js/htmx.LICENSE) so the binary needs no CDN and no runtime network.
package static

import "embed"

// FS holds css/ and js/; web serves each file under a content-hashed URL.
//
//go:embed css js
var FS embed.FS
