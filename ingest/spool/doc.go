// Package spool is the local, fsynced, append-only store that ingest falls
// back to when Postgres is down, so that a 200 still means "durable".
//
// Records live in segment files (<seq>.seg, rotated at Options.SegmentBytes).
// Each record is one frame:
//
//	uint32 LE  payload length
//	uint32 LE  CRC32C over the flags byte and the payload
//	uint8      flags (bit 0: the next frame belongs to the same Append batch)
//	[]byte     payload: the Record as JSON
//
// A batch is valid only when its last frame (flag bit 0 clear) is intact, so
// a crash in the middle of a write never resurrects half a batch. On Open a
// torn or corrupted tail is truncated away and everything before it is kept.
//
// Replay hands records to the caller in order and forgets them only after
// the caller succeeded: a fully replayed segment is deleted, a partly
// replayed one gets its progress recorded in an atomically renamed
// checkpoint file. A crash during Replay can therefore hand the last batch
// over a second time, which is why the caller inserts with ON CONFLICT DO
// NOTHING.
package spool
