package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/leadgate/leadgate/models"
)

// cmdResync queues contacts' current state for a CRM again:
//
//	leadgate resync --workspace default [--destination ID] [--contact UUID]
//
// Without --destination every destination of the workspace is resynced; without --contact every live
// contact. The running workers send the queued work (the CLI only queues it, durably, in Postgres).
func cmdResync(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("resync", flag.ContinueOnError)
	fs.SetOutput(stderr)
	slug := fs.String("workspace", "default", "workspace slug")
	dest := fs.Int64("destination", 0, "destination id (default: every destination of the workspace)")
	contact := fs.String("contact", "", "contact id (default: every contact)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("resync: unexpected argument %q", fs.Arg(0))
	}
	store, _, _, err := openStore(ctx, stderr, getenv)
	if err != nil {
		return err
	}
	defer store.Close()
	ws, err := store.WorkspaceBySlug(ctx, *slug)
	if errors.Is(err, models.ErrNotFound) {
		return fmt.Errorf("resync: unknown workspace %q", *slug)
	}
	if err != nil {
		return err
	}
	dests, err := store.DestinationList(ctx, ws.ID)
	if err != nil {
		return err
	}
	total := int64(0)
	found := false
	for _, d := range dests {
		if *dest != 0 && d.ID != *dest {
			continue
		}
		found = true
		var n int64
		err := store.Tx(ctx, func(tx *models.Store) error {
			var err error
			if *contact != "" {
				if _, err = tx.ContactGet(ctx, ws.ID, *contact); err != nil {
					return err
				}
				n, err = 1, tx.SyncRequeue(ctx, d.ID, *contact)
			} else {
				n, err = tx.SyncRequeueAll(ctx, d.ID)
				if err == nil {
					// A whole-destination resync: a CRM with a bulk import takes it in batches (crm/syncer/bulk.go).
					_, err = tx.SyncMarkBulk(ctx, d.ID)
				}
			}
			if err != nil {
				return err
			}
			return tx.AuditRecord(ctx, models.Audit{WorkspaceID: ws.ID, Actor: "cli", Action: "destination.resync", SubjectType: "destination",
				SubjectID: strconv.FormatInt(d.ID, 10), After: map[string]any{"contact_id": *contact, "queued": n}})
		})
		if errors.Is(err, models.ErrNotFound) {
			return fmt.Errorf("resync: unknown contact %q in workspace %q", *contact, *slug)
		}
		if err != nil {
			return fmt.Errorf("resync: destination %d: %w", d.ID, err)
		}
		fmt.Fprintf(stdout, "destination %d (%s): %d contact(s) queued\n", d.ID, d.Name, n)
		total += n
	}
	if !found {
		return fmt.Errorf("resync: no destination %d in workspace %q", *dest, *slug)
	}
	fmt.Fprintf(stdout, "%d queued\n", total)
	return nil
}
