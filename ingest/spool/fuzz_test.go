package spool

import (
	"encoding/json"
	"slices"
	"testing"
)

func seedFrames(f *testing.F) {
	for _, batch := range [][]Record{records(0, 1), records(0, 3)} {
		var seg []byte
		for i, r := range batch {
			payload, err := json.Marshal(r)
			if err != nil {
				f.Fatal(err)
			}
			seg = appendFrame(seg, payload, i < len(batch)-1)
		}
		f.Add(seg)
		f.Add(seg[:len(seg)-1])
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(appendFrame(nil, []byte(`{"id":""}`), false))
	f.Add(appendFrame(nil, []byte(`not json`), false))
	f.Add(appendFrame(nil, []byte(`{"id":"x","data":[1,2]}`), false))
}

// FuzzDecodeFrame checks that the record decoder never panics and that
// whatever it accepts survives a round trip.
func FuzzDecodeFrame(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, continues, size, err := decodeFrame(data)
		if err != nil {
			return
		}
		if size < frameHeaderSize || size > len(data) {
			t.Fatalf("size %d outside [%d, %d]", size, frameHeaderSize, len(data))
		}
		payload, err := json.Marshal(rec)
		if err != nil {
			t.Fatalf("accepted record does not encode: %v", err)
		}
		again, againContinues, _, err := decodeFrame(appendFrame(nil, payload, continues))
		if err != nil {
			t.Fatalf("re-encoded frame does not decode: %v", err)
		}
		if again.ID != rec.ID || again.IdempotencyKey != rec.IdempotencyKey || againContinues != continues {
			t.Fatalf("round trip changed the record: %+v → %+v", rec, again)
		}
	})
}

// FuzzScanSegment checks that recovery never panics, never claims bytes
// past the input, and that the prefix it keeps scans clean on its own.
func FuzzScanSegment(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		scan := scanSegment(data)
		if scan.validEnd < 0 || scan.validEnd > int64(len(data)) {
			t.Fatalf("validEnd %d outside [0, %d]", scan.validEnd, len(data))
		}
		if (scan.tail == nil) != (scan.validEnd == int64(len(data))) {
			t.Fatalf("tail %v with validEnd %d of %d", scan.tail, scan.validEnd, len(data))
		}
		kept := scanSegment(data[:scan.validEnd])
		if kept.tail != nil {
			t.Fatalf("kept prefix does not scan clean: %v", kept.tail)
		}
		if !slices.Equal(ids(recordsOf(kept)), ids(recordsOf(scan))) {
			t.Fatal("kept prefix scans to different records")
		}
	})
}

func recordsOf(s segmentScan) []Record {
	out := make([]Record, len(s.records))
	for i, r := range s.records {
		out[i] = r.rec
	}
	return out
}
