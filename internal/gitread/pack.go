package gitread

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
)

// packIndex is a pack index (version 2), read through ReadAt: nothing but the
// fan-out table is held in memory, whatever the number of objects.
type packIndex struct {
	r      io.ReaderAt
	name   string
	n      uint32
	fanout [256]uint32
	size   int64
}

const idxHeader = 8 + 256*4

func openIndex(r io.ReaderAt, size int64, name string) (*packIndex, error) {
	bad := func(msg string) error { return &CorruptError{What: name, Msg: msg} }
	if size < idxHeader+40 {
		return nil, bad("too short for a pack index")
	}
	var h [idxHeader]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return nil, err
	}
	if !bytes.Equal(h[:4], []byte{0xff, 't', 'O', 'c'}) {
		return nil, bad("not a version 2 pack index (version 1 indexes are not read: run `git index-pack` or `git gc` with a current git)")
	}
	if v := binary.BigEndian.Uint32(h[4:8]); v != 2 {
		return nil, bad(fmt.Sprintf("pack index version %d (only 2 is read)", v))
	}
	ix := &packIndex{r: r, name: name, size: size}
	var prev uint32
	for i := range 256 {
		f := binary.BigEndian.Uint32(h[8+4*i:])
		if f < prev {
			return nil, bad("fan-out table is not sorted")
		}
		ix.fanout[i], prev = f, f
	}
	ix.n = prev
	min := int64(idxHeader) + int64(ix.n)*28 + 40
	if size < min || size > min+int64(ix.n)*8 || (size-min)%8 != 0 {
		return nil, bad(fmt.Sprintf("%d bytes for %d objects", size, ix.n))
	}
	return ix, nil
}

func (ix *packIndex) idAt(i uint32) (ID, error) {
	var id ID
	_, err := ix.r.ReadAt(id[:], idxHeader+int64(i)*20)
	return id, err
}

// find returns the position of id, or false.
func (ix *packIndex) find(id ID) (uint32, bool, error) {
	lo, hi, err := ix.rangeOf(id[0])
	if err != nil {
		return 0, false, err
	}
	var ferr error
	k := sort.Search(int(hi-lo), func(k int) bool {
		got, err := ix.idAt(lo + uint32(k)) //nolint:gosec // 0 <= k < hi-lo, a uint32
		if err != nil {
			ferr = err
			return true
		}
		return bytes.Compare(got[:], id[:]) >= 0
	})
	if ferr != nil {
		return 0, false, ferr
	}
	i := lo + uint32(k) //nolint:gosec // 0 <= k <= hi-lo, a uint32
	if i >= hi {
		return 0, false, nil
	}
	got, err := ix.idAt(i)
	if err != nil {
		return 0, false, err
	}
	return i, got == id, nil
}

func (ix *packIndex) rangeOf(first byte) (uint32, uint32, error) {
	var lo uint32
	if first > 0 {
		lo = ix.fanout[first-1]
	}
	hi := ix.fanout[first]
	if lo > hi || hi > ix.n {
		return 0, 0, &CorruptError{What: ix.name, Msg: "fan-out table out of range"}
	}
	return lo, hi, nil
}

// withPrefix lists the ids that start with the hex prefix (up to limit).
func (ix *packIndex) withPrefix(p hexPrefix, limit int) ([]ID, error) {
	lo, hi, err := ix.rangeOf(p.first())
	if err != nil {
		return nil, err
	}
	var out []ID
	for i := lo; i < hi && len(out) < limit; i++ {
		id, err := ix.idAt(i)
		if err != nil {
			return nil, err
		}
		if p.match(id) {
			out = append(out, id)
		}
	}
	return out, nil
}

func (ix *packIndex) offset(i uint32) (int64, error) {
	var b [8]byte
	base := idxHeader + int64(ix.n)*24
	if _, err := ix.r.ReadAt(b[:4], base+int64(i)*4); err != nil {
		return 0, err
	}
	o := binary.BigEndian.Uint32(b[:4])
	if o&0x80000000 == 0 {
		return int64(o), nil
	}
	big := idxHeader + int64(ix.n)*28 + int64(o&0x7fffffff)*8
	if big+8 > ix.size-40 {
		return 0, &CorruptError{What: ix.name, Msg: "64-bit offset out of range"}
	}
	if _, err := ix.r.ReadAt(b[:], big); err != nil {
		return 0, err
	}
	v := binary.BigEndian.Uint64(b[:])
	if v > 1<<62 {
		return 0, &CorruptError{What: ix.name, Msg: "offset out of range"}
	}
	return int64(v), nil
}

// packFile is a .pack read through ReadAt.
type packFile struct {
	r    io.ReaderAt
	name string
	size int64
}

const (
	objOfsDelta = 6
	objRefDelta = 7
)

func openPack(r io.ReaderAt, size int64, name string) (*packFile, error) {
	var h [12]byte
	if size < 12+20 {
		return nil, &CorruptError{What: name, Msg: "too short for a pack"}
	}
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return nil, err
	}
	if string(h[:4]) != "PACK" {
		return nil, &CorruptError{What: name, Msg: "no PACK signature"}
	}
	if v := binary.BigEndian.Uint32(h[4:8]); v != 2 && v != 3 {
		return nil, &CorruptError{What: name, Msg: fmt.Sprintf("pack version %d", v)}
	}
	return &packFile{r: r, name: name, size: size}, nil
}

// entryHeader is one pack entry's header: a whole object, or a delta with its
// base, and where its zlib stream starts. Reading it inflates nothing.
type entryHeader struct {
	typ     int
	size    uint64 // the inflated size: the object's, or the delta's
	off     int64  // the entry's offset
	data    int64  // the offset of its zlib stream
	baseOff int64  // OFS_DELTA: the base's offset
	baseID  ID     // REF_DELTA: the base's id
}

// where names the entry in messages.
func (h *entryHeader) where(p *packFile) string {
	return fmt.Sprintf("at offset %d of %s", h.off, p.name)
}

// readHeader reads the header of the entry at off; an entry whose inflated
// size is over max is a *TooLargeError (nothing is inflated).
func (p *packFile) readHeader(off int64, max int64) (entryHeader, error) {
	bad := func(msg string) error {
		return &CorruptError{What: fmt.Sprintf("at offset %d of %s", off, p.name), Msg: msg}
	}
	if off < 12 || off >= p.size-20 {
		return entryHeader{}, bad("offset out of range")
	}
	// A header is at most 1+9 bytes of type and size, then 10 bytes of base
	// offset or 20 of base id.
	var hb [40]byte
	n, err := p.r.ReadAt(hb[:min(int64(len(hb)), p.size-20-off)], off)
	if n == 0 && err != nil {
		return entryHeader{}, bad("truncated entry header")
	}
	b := hb[:n]
	i := 0
	next := func() (byte, bool) {
		if i >= len(b) {
			return 0, false
		}
		i++
		return b[i-1], true
	}
	c, _ := next()
	h := entryHeader{typ: int(c>>4) & 7, off: off}
	size := uint64(c & 0x0f)
	shift := uint(4)
	for c&0x80 != 0 {
		var ok bool
		if c, ok = next(); !ok || shift > 60 {
			return entryHeader{}, bad("truncated entry header")
		}
		size |= uint64(c&0x7f) << shift
		shift += 7
	}
	h.size = size
	switch h.typ {
	case 1, 2, 3, 4:
	case objOfsDelta:
		c, ok := next()
		if !ok {
			return entryHeader{}, bad("truncated delta offset")
		}
		rel := uint64(c & 0x7f)
		for n := 0; c&0x80 != 0; n++ {
			if c, ok = next(); !ok || n > 8 {
				return entryHeader{}, bad("truncated delta offset")
			}
			rel = ((rel + 1) << 7) | uint64(c&0x7f)
		}
		if rel == 0 || rel > uint64(off) {
			return entryHeader{}, bad("delta base offset out of range")
		}
		h.baseOff = off - int64(rel)
	case objRefDelta:
		if len(b)-i < len(h.baseID) {
			return entryHeader{}, bad("truncated delta base id")
		}
		copy(h.baseID[:], b[i:])
		i += len(h.baseID)
	default:
		return entryHeader{}, bad(fmt.Sprintf("unknown entry type %d", h.typ))
	}
	if size > u64(max) {
		return entryHeader{}, &TooLargeError{What: h.where(p), Size: size, Max: max}
	}
	h.data = off + int64(i)
	return h, nil
}

// inflate reads the entry's content (the object, or the delta): exactly the
// size its header declares, which readHeader checked against the cap.
func (p *packFile) inflate(h entryHeader) ([]byte, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(p.r, h.data, p.size-20-h.data), 4096)
	data, err := inflate(br, h.size)
	if err != nil {
		return nil, &CorruptError{What: h.where(p), Msg: err.Error()}
	}
	return data, nil
}

// inflate reads exactly size bytes from the zlib stream r.
func inflate(r io.Reader, size uint64) ([]byte, error) {
	zr, err := zlib.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("zlib: %w", err)
	}
	defer zr.Close()
	buf := make([]byte, size)
	if _, err := io.ReadFull(zr, buf); err != nil {
		return nil, fmt.Errorf("zlib: %d bytes expected: %w", size, err)
	}
	var one [1]byte
	if n, _ := zr.Read(one[:]); n > 0 {
		return nil, fmt.Errorf("zlib: more than the %d bytes declared", size)
	}
	return buf, nil
}

// errLoop is a delta chain that does not end.
var errLoop = errors.New("delta chain deeper than 10000")

// errCycle is a delta chain that comes back to one of its own entries (a
// REF_DELTA whose base is itself, or is a delta on it).
var errCycle = errors.New("circular delta chain: an entry is a delta on itself")
