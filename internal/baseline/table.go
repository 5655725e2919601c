package baseline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// record is the compact form of one baseline case that the join keeps: 64 bytes,
// whatever the length of its id, query, gold or top-k (those stay in the temporary
// file, at off, read back only for the cases a report lists).
type record struct {
	id, gold uint64
	scores   [metrics.NumCase]float64
	off      int64
	size     uint32
	line     uint32 // in the baseline file (duplicate-id errors)
	rank     int32
	has      uint8 // bit i: scores[i] is present
	ranked   bool
}

func (r *record) hasScore(i int) bool { return r.has&(1<<i) != 0 }
func (r *record) scored() bool        { return r.has != 0 }

// Baseline is a loaded baseline: its header, the compact records in file order
// and an open-addressing hash table from id hash to record. Memory: 64 bytes per
// case for the record plus 12 bytes per table slot (at most 3/4 full), about 80 bytes
// per baseline case; the ids, queries, gold and top-k lists are copied to one
// temporary file (about the size of the decompressed baseline) and read back only
// for the listed cases. Close removes the file.
type Baseline struct {
	Source  *Source // File, Format, Header, SchemaRead (no longer readable)
	recs    records
	keys    []uint64 // 0: empty
	slots   []int32
	bits    uint
	tmp     *os.File
	Skipped int64 // lines with no registered score and no gold (nothing to compare)
}

// records is a list of records in fixed chunks of recChunk, so that it grows
// without the doubling copies of one slice (peak memory stays 64 bytes a case).
type records struct {
	chunks [][]record
	n      int
}

const recChunk = 1 << 16

func (rs *records) add(r record) {
	if rs.n%recChunk == 0 {
		rs.chunks = append(rs.chunks, make([]record, 0, recChunk))
	}
	last := &rs.chunks[len(rs.chunks)-1]
	*last = append(*last, r)
	rs.n++
}

func (rs *records) at(i int) *record { return &rs.chunks[i/recChunk][i%recChunk] }

// Load reads the whole baseline from r (named file), in bounded memory: see
// Baseline. A duplicate case id is an input error naming both lines. The
// temporary file is made in tmpDir ("" is the system's).
func Load(ctx context.Context, r io.Reader, file, tmpDir string) (*Baseline, error) {
	src, err := Open(input.Reader(ctx, r), file)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(tmpDir, "retrieval-gate-baseline-*")
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	os.Remove(tmp.Name()) // unlinked at once: the open file is ours alone
	b := &Baseline{Source: src, tmp: tmp}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	var p fastjson.Parser
	var c CaseLine
	var off int64
	for n := 0; ; n++ {
		if n&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		line, ln, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := ParseCaseLine(&p, line, file, ln, &c); err != nil {
			return nil, err
		}
		// The record's fields are 32-bit (64 bytes a case): what does not fit is an
		// input error, never a silently truncated value.
		idx := b.recs.n
		if ln < 0 || ln > math.MaxUint32 { // Source counts lines from 1
			return nil, input.Errorf(file, ln, "more than %d lines: split the baseline", uint32(math.MaxUint32))
		}
		if idx < 0 || idx >= math.MaxInt32 {
			return nil, input.Errorf(file, ln, "more than %d cases: split the baseline", math.MaxInt32)
		}
		if c.Rank < 0 || c.Rank > math.MaxInt32 { // ParseCaseLine rejects a negative rank
			return nil, input.Errorf(file, ln, "rank %d is above %d", c.Rank, math.MaxInt32)
		}
		rec := record{id: IDHash(c.ID), gold: GoldHash(c.Gold), scores: c.Scores, off: off,
			size: uint32(len(line)), //nolint:gosec // G115: Source's scanner caps a line at MaxLineBytes (16 MiB)
			line: uint32(ln), rank: int32(c.Rank), ranked: c.Ranked}
		for i, h := range c.Has {
			if h {
				rec.has |= 1 << i
			}
		}
		if first, dup := b.insert(rec.id, int32(idx)); dup {
			return nil, input.Errorf(file, ln, "duplicate case id %q (first at line %d)", c.ID, b.recs.at(int(first)).line)
		}
		b.recs.add(rec)
		if _, err := w.Write(line); err != nil {
			return nil, fmt.Errorf("baseline: temporary file: %w", err)
		}
		off += int64(len(line))
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("baseline: temporary file: %w", err)
	}
	ok = true
	return b, nil
}

// Close removes the temporary file.
func (b *Baseline) Close() error {
	if b == nil || b.tmp == nil {
		return nil
	}
	err := b.tmp.Close()
	b.tmp = nil
	return err
}

// CreatedAt is the header's created_at, zero when absent or not RFC 3339.
func (b *Baseline) CreatedAt() time.Time {
	if b.Source.Header == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, b.Source.Header.CreatedAt)
	if err != nil {
		return time.Time{}
	}
	return t
}

// insert adds id -> idx, or returns the index already stored for id.
func (b *Baseline) insert(id uint64, idx int32) (int32, bool) {
	if 4*(b.recs.n+1) > 3*len(b.keys) {
		b.grow()
	}
	mask := uint64(1)<<b.bits - 1 // len(b.keys) is 1<<b.bits
	for i := (id * 0x9e3779b97f4a7c15) >> (64 - b.bits); ; i = (i + 1) & mask {
		switch b.keys[i] {
		case 0:
			b.keys[i], b.slots[i] = id, idx
			return 0, false
		case id:
			return b.slots[i], true
		}
	}
}

func (b *Baseline) grow() {
	oldKeys, oldSlots := b.keys, b.slots
	if b.bits == 0 {
		b.bits = 12
	} else {
		b.bits++
	}
	b.keys = make([]uint64, 1<<b.bits)
	b.slots = make([]int32, 1<<b.bits)
	mask := uint64(1)<<b.bits - 1 // len(b.keys) is 1<<b.bits
	for j, k := range oldKeys {
		if k == 0 {
			continue
		}
		for i := (k * 0x9e3779b97f4a7c15) >> (64 - b.bits); ; i = (i + 1) & mask {
			if b.keys[i] == 0 {
				b.keys[i], b.slots[i] = k, oldSlots[j]
				break
			}
		}
	}
}

// lookup returns the index of the record of id hash, or -1. Safe for concurrent
// use once Load has returned.
func (b *Baseline) lookup(id uint64) int {
	if len(b.keys) == 0 {
		return -1
	}
	mask := uint64(1)<<b.bits - 1 // len(b.keys) is 1<<b.bits
	for i := (id * 0x9e3779b97f4a7c15) >> (64 - b.bits); ; i = (i + 1) & mask {
		switch b.keys[i] {
		case 0:
			return -1
		case id:
			return int(b.slots[i])
		}
	}
}

// detail reads the full case line of record i back from the temporary file.
func (b *Baseline) detail(i int) (CaseLine, error) {
	r := b.recs.at(i)
	buf := make([]byte, r.size)
	if _, err := b.tmp.ReadAt(buf, r.off); err != nil {
		return CaseLine{}, fmt.Errorf("baseline: temporary file: %w", err)
	}
	var p fastjson.Parser
	var c CaseLine
	err := ParseCaseLine(&p, buf, b.Source.File, int(r.line), &c)
	return c, err
}
