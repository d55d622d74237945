package spool

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
)

const (
	frameHeaderSize = 9
	// flagBatchContinues marks a frame followed by another of the same batch.
	flagBatchContinues byte = 1 << 0
	// maxRecordBytes bounds one encoded record so that a corrupted length
	// cannot make recovery allocate gigabytes.
	maxRecordBytes = 64 << 20
)

// castagnoli is the CRC32C table; it is computed once and never written.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	errTruncated       = errors.New("truncated frame")
	errLength          = errors.New("invalid frame length")
	errFlags           = errors.New("unknown frame flags")
	errChecksum        = errors.New("frame checksum mismatch")
	errIncompleteBatch = errors.New("batch without its final frame")
)

// appendFrame appends payload framed as one record to dst.
func appendFrame(dst, payload []byte, continues bool) []byte {
	var hdr [frameHeaderSize]byte
	binary.LittleEndian.PutUint32(hdr[0:4], uint32(len(payload)))
	if continues {
		hdr[8] = flagBatchContinues
	}
	crc := crc32.Update(0, castagnoli, hdr[8:9])
	crc = crc32.Update(crc, castagnoli, payload)
	binary.LittleEndian.PutUint32(hdr[4:8], crc)
	dst = append(dst, hdr[:]...)
	return append(dst, payload...)
}

// decodeFrame decodes the frame at the start of b and reports its size in
// bytes. Any error means b does not start with an intact frame.
func decodeFrame(b []byte) (rec Record, continues bool, size int, err error) {
	if len(b) < frameHeaderSize {
		return Record{}, false, 0, errTruncated
	}
	n := binary.LittleEndian.Uint32(b[0:4])
	if n == 0 || n > maxRecordBytes {
		return Record{}, false, 0, fmt.Errorf("%w: %d", errLength, n)
	}
	flags := b[8]
	if flags&^flagBatchContinues != 0 {
		return Record{}, false, 0, fmt.Errorf("%w: %#x", errFlags, flags)
	}
	end := frameHeaderSize + int(n)
	if len(b) < end {
		return Record{}, false, 0, errTruncated
	}
	if crc32.Checksum(b[8:end], castagnoli) != binary.LittleEndian.Uint32(b[4:8]) {
		return Record{}, false, 0, errChecksum
	}
	if err := json.Unmarshal(b[frameHeaderSize:end], &rec); err != nil {
		return Record{}, false, 0, fmt.Errorf("decode record: %w", err)
	}
	if err := rec.validate(); err != nil {
		return Record{}, false, 0, fmt.Errorf("decode record: %w", err)
	}
	return rec, flags&flagBatchContinues != 0, end, nil
}

// scannedRecord is a decoded record and the offset just past its frame.
type scannedRecord struct {
	rec Record
	end int64
}

// segmentScan is what a segment file holds.
type segmentScan struct {
	// records are those of complete batches, in file order.
	records []scannedRecord
	// validEnd is the offset just past the last complete batch.
	validEnd int64
	// tail explains why bytes after validEnd were not accepted; nil when
	// the file ends exactly at validEnd.
	tail error
}

// scanSegment decodes a whole segment, stopping at the first frame that
// is torn or corrupt, and keeps only batches whose final frame is intact.
func scanSegment(data []byte) segmentScan {
	var (
		res   segmentScan
		batch []scannedRecord
		off   int
	)
	for off < len(data) {
		rec, continues, size, err := decodeFrame(data[off:])
		if err != nil {
			res.tail = fmt.Errorf("offset %d: %w", off, err)
			return res
		}
		off += size
		batch = append(batch, scannedRecord{rec: rec, end: int64(off)})
		if !continues {
			res.records = append(res.records, batch...)
			batch = batch[:0]
			res.validEnd = int64(off)
		}
	}
	if len(batch) > 0 {
		res.tail = fmt.Errorf("offset %d: %w", res.validEnd, errIncompleteBatch)
	}
	return res
}
