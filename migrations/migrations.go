// Package migrations embeds leadgate's SQL schema migrations. Files are
// append-only: a released migration is never edited, only followed by a new one.
package migrations

import "embed"

// FS holds the goose-format SQL files (NNNNN_name.sql).
//
//go:embed *.sql
var FS embed.FS
