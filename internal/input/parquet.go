package input

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"

	rgformat "github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// Parquet shards (issue 35 item 3). A Parquet file (one that starts with the
// magic bytes "PAR1") is read as the lines of the text format its columns
// spell, one line a row, so that every reader of a JSONL or TREC file reads it
// unchanged and its errors name the file and the row ("FILE:ROW: …", rows
// counted from 1 over the file's row groups):
//
//   - a table with the columns query_id, doc_id and score (rank and tag
//     optional, no relevance, no id) is a TREC run: "query_id Q0 doc_id rank
//     score tag" (rank 0 and tag "parquet" when absent);
//   - any other table is JSONL: each row one JSON object whose keys are the
//     top-level columns, in schema order; a null value is left out, as Spark's
//     JSON writer leaves it out. So cases (id, locale, type, query,
//     must_cite_one_of, relevant_ids, cluster, retrieved, scores) and JSONL
//     qrels (query_id, doc_id, relevance) are read by their JSONL readers.
//
// A column is a string (BYTE_ARRAY, with or without the STRING annotation),
// an integer (INT32, INT64, signed or unsigned), a float (FLOAT, DOUBLE;
// finite) or a boolean; a list of those (LIST, or a repeated column); a
// struct of those (a JSON object); a list of structs (retrieved's {id,
// parent_id, score, text}); or a map with string keys (scores). Anything
// else (INT96, FIXED_LEN_BYTE_ARRAY, dates and times, decimals, deeper
// nesting) is refused naming the column.
//
// Memory: the file is read one page of each column at a time (the rows of a
// row group are assembled from them, a few hundred rows at a time), never a
// whole row group; a page larger than MaxParquetPage or of more than 4 Mi
// values, a footer larger than MaxParquetFooter and a row whose line is
// longer than MaxParquetLine are refused before they are read.

// Caps of the Parquet reader.
const (
	MaxParquetPage   = 64 << 20 // bytes of one page, compressed or not
	MaxParquetFooter = 64 << 20 // bytes of the footer (the file's metadata)
	// maxParquetFooterElements bounds the elements of the footer's lists,
	// sets and maps together (schema elements, row groups, column chunks, …):
	// one byte of the footer can claim a struct of hundreds of bytes.
	maxParquetFooterElements = 1 << 21
	MaxParquetLine           = 64 << 20 // bytes of one row's line (casefile.MaxLine)
)

// maxParquetPageValues caps the values of one page: run-length encoding
// packs millions of values into a few bytes, and the library holds a row's
// values as 24-byte structs (4 Mi values: 96 MiB).
var maxParquetPageValues int32 = 1 << 22

// parquetMagic starts and ends every Parquet file.
const parquetMagic = "PAR1"

// IsParquet reports whether path is a regular file that starts with the
// Parquet magic bytes.
func IsParquet(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	return isParquetFile(f)
}

func isParquetFile(f io.ReaderAt) bool {
	var b [4]byte
	n, _ := f.ReadAt(b[:], 0)
	return n == 4 && string(b[:]) == parquetMagic
}

// parquetLines reads a Parquet file as text lines, one a row.
type parquetLines struct {
	ctx  context.Context
	name string
	f    *parquet.File
	trec bool           // a TREC run
	plan []parquetField // top-level fields (JSONL)
	run  [5]int         // TREC: leaf columns of query_id, doc_id, rank, score, tag (-1 absent)

	rg   int // the next row group
	rows parquet.Rows
	buf  []parquet.Row
	bi   int   // next row of buf
	bn   int   // rows in buf
	per  int   // rows read at a time in the current row group (readRowsAtOnce)
	row  int64 // rows read so far
	cols [][]parquet.Value

	line []byte // the row's line (the goroutine's)

	ch     chan lineBatch // batches of lines, to Read
	free   chan []byte    // batches read, back to the goroutine
	done   chan struct{}  // closed by Close
	exited chan struct{}  // closed when the goroutine ends
	cur    []byte         // the batch being read
	off    int            // read offset in cur
	err    error          // the error after cur
}

// parquetField is a top-level column: how its leaf columns [lo, hi) make a
// JSON value.
type parquetField struct {
	key    []byte // "name":
	kind   int    // fieldScalar, fieldObject, fieldList, fieldMap
	lo, hi int    // leaf columns
	leaves []parquetLeaf
	dField int // a leaf's definition level from which the field is present
	dElem  int // lists and maps: from which an element (entry) is present
	dItem  int // lists: from which the element is not null
	obj    bool
}

type parquetLeaf struct {
	key  []byte // "name": inside an object (nil for a scalar element)
	enc  int    // how its value is written
	dMax int
	name string // the column's path, for messages
}

const (
	fieldScalar = iota
	fieldObject
	fieldList
	fieldMap
)

const (
	encString = iota
	encInt
	encUint
	encFloat
	encBool
	encJSON // a JSON-annotated string: the JSON value itself
)

// openParquet opens f (size bytes, named name in messages) as lines.
func openParquet(ctx context.Context, name string, f io.ReaderAt, size int64) (*parquetLines, error) {
	if size < 12 {
		return nil, Errorf(name, 0, "not a Parquet file: %d bytes, shorter than its magic bytes and footer", size)
	}
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return nil, err
	}
	if string(tail[4:]) != parquetMagic {
		return nil, Errorf(name, 0, "not a Parquet file: it starts with %q but does not end with it (a truncated file, or an encrypted footer, which is not read)", parquetMagic)
	}
	if n := int64(tail[0]) | int64(tail[1])<<8 | int64(tail[2])<<16 | int64(tail[3])<<24; n > MaxParquetFooter || n > size-12 {
		return nil, Errorf(name, 0, "not a valid Parquet file: a footer of %d bytes (the cap is %d MiB, the file has %d bytes)", n, MaxParquetFooter>>20, size)
	}
	if err := checkFooter(f, size); err != nil {
		return nil, Errorf(name, 0, "not a valid Parquet file: footer: %v", err)
	}
	pf, err := parquetOpen(f, size)
	if err != nil {
		return nil, Errorf(name, 0, "not a valid Parquet file: %v", err)
	}
	if err := checkPages(pf, size); err != nil {
		return nil, Errorf(name, 0, "not a valid Parquet file: %v", err)
	}
	p := &parquetLines{ctx: ctx, name: name, f: pf}
	if err := p.planSchema(); err != nil {
		return nil, Errorf(name, 0, "%v", err)
	}
	p.buf = make([]parquet.Row, 256)
	var lo, hi int = -1, 0
	leafRange(pf.Root(), &lo, &hi)
	p.cols = make([][]parquet.Value, hi)
	return p, nil
}

// checkFooter decodes the footer of f (its length already checked against
// MaxParquetFooter and the file) as the library will, each claimed length of
// bytes, a list, a set or a map bounded by the footer's bytes left and the
// lists' elements together by maxParquetFooterElements: the library's
// decoder allocates a claimed length before it reads it (a footer of 25
// bytes claimed 2³¹ − 1 schema elements, and the process ran out of memory,
// which no recover catches).
func checkFooter(f io.ReaderAt, size int64) error {
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	n := int64(tail[0]) | int64(tail[1])<<8 | int64(tail[2])<<16 | int64(tail[3])<<24
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-8-n); err != nil {
		return err
	}
	r := bytes.NewReader(buf)
	var proto thrift.CompactProtocol
	elems := int64(0)
	dec := thrift.NewDecoder(boundedThrift{proto.NewReader(r), func() int64 { return int64(r.Len()) }, &elems})
	var md format.FileMetaData
	return dec.Decode(&md)
}

// parquetOpen is parquet.OpenFile, its panics (a damaged footer) made errors.
func parquetOpen(f io.ReaderAt, size int64) (pf *parquet.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			pf, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return parquet.OpenFile(f, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(64<<10))
}

// checkPages walks the page headers of every column chunk (the headers only,
// read from the file; the pages are skipped) and refuses a chunk outside the
// file and a page larger than MaxParquetPage or than its chunk: the library
// allocates a page's claimed size before it reads it.
func checkPages(f *parquet.File, size int64) error {
	md := f.Metadata()
	var proto thrift.CompactProtocol
	var lz4Buf [2][]byte
	for g, rg := range md.RowGroups {
		for c := range rg.Columns {
			cm := &rg.Columns[c].MetaData
			start := cm.DataPageOffset
			if cm.DictionaryPageOffset > 0 && cm.DictionaryPageOffset < start {
				start = cm.DictionaryPageOffset
			}
			n := cm.TotalCompressedSize
			if start < 4 || n < 0 || start > size || n > size-start {
				return fmt.Errorf("row group %d, column %d: a column chunk at bytes [%d, %d+%d) outside the file of %d bytes", g, c, start, start, n, size)
			}
			// The library decompresses every chunk of a column with the
			// codec of its first row group's (a chunk of no values too).
			lz4Raw := cm.Codec == format.Lz4Raw || c < len(md.RowGroups[0].Columns) && md.RowGroups[0].Columns[c].MetaData.Codec == format.Lz4Raw
			if cm.NumValues == 0 && !lz4Raw {
				continue
			}
			sec := io.NewSectionReader(f, start, n)
			cr := &countReader{r: bufio.NewReaderSize(sec, 4096), sec: sec}
			dec := thrift.NewDecoder(boundedThrift{proto.NewReader(cr), func() int64 { return n - cr.n }, nil})
			for cr.n < n {
				var h format.PageHeader
				if err := dec.Decode(&h); err != nil {
					return fmt.Errorf("row group %d, column %d: page header at byte %d: %w", g, c, start+cr.n, err)
				}
				if h.CompressedPageSize < 0 || h.UncompressedPageSize < 0 || h.CompressedPageSize > MaxParquetPage || h.UncompressedPageSize > MaxParquetPage {
					return fmt.Errorf("row group %d, column %d: a page of %d bytes (%d uncompressed): the cap is %d MiB", g, c, h.CompressedPageSize, h.UncompressedPageSize, MaxParquetPage>>20)
				}
				if nv := pageValues(&h); nv > maxParquetPageValues {
					return fmt.Errorf("row group %d, column %d: a page of %d values: the cap is %d", g, c, nv, maxParquetPageValues)
				}
				if int64(h.CompressedPageSize) > n-cr.n {
					return fmt.Errorf("row group %d, column %d: a page of %d bytes past the end of its column chunk", g, c, h.CompressedPageSize)
				}
				if lz4Raw {
					if err := checkLZ4Page(cr, &h, &lz4Buf); err != nil {
						return fmt.Errorf("row group %d, column %d: %w", g, c, err)
					}
					continue
				}
				if _, err := cr.discard(int64(h.CompressedPageSize)); err != nil {
					return fmt.Errorf("row group %d, column %d: %w", g, c, err)
				}
			}
		}
	}
	return nil
}

// boundedThrift reads a page header or a footer, refusing a length (of
// bytes, a list, a set or a map) past what is left of its column chunk or
// footer (left), and, when elems is set (a footer), lists, sets and maps of
// more than maxParquetFooterElements elements together: the library's decoder
// allocates a claimed length before it reads it, up to 2 GiB a field.
type boundedThrift struct {
	thriftReader
	left  func() int64
	elems *int64
}

// thriftReader names the embedded reader apart from its method Reader.
type thriftReader = thrift.Reader

func (b boundedThrift) check(n int64) error {
	if n > b.left() {
		if b.elems != nil {
			return fmt.Errorf("a field of length %d past the end of the footer", n)
		}
		return fmt.Errorf("a header field of length %d past the end of its column chunk", n)
	}
	return nil
}

// checkElems is check for the n elements of a list, a set or a map.
func (b boundedThrift) checkElems(n int64) error {
	if err := b.check(n); err != nil || b.elems == nil {
		return err
	}
	if *b.elems += n; *b.elems > maxParquetFooterElements {
		return fmt.Errorf("more than %d elements in its lists", maxParquetFooterElements)
	}
	return nil
}

func (b boundedThrift) ReadBytes() ([]byte, error) {
	n, err := b.ReadLength()
	if err != nil {
		return nil, err
	}
	if err := b.check(int64(n)); err != nil {
		return nil, err
	}
	out := make([]byte, n)
	_, err = io.ReadFull(b.thriftReader.Reader(), out)
	return out, err
}

func (b boundedThrift) ReadString() (string, error) {
	s, err := b.ReadBytes()
	return string(s), err
}

func (b boundedThrift) ReadList() (thrift.List, error) {
	l, err := b.thriftReader.ReadList()
	if err == nil {
		err = b.checkElems(int64(l.Size))
	}
	return l, err
}

func (b boundedThrift) ReadSet() (thrift.Set, error) {
	l, err := b.thriftReader.ReadSet()
	if err == nil {
		err = b.checkElems(int64(l.Size))
	}
	return l, err
}

func (b boundedThrift) ReadMap() (thrift.Map, error) {
	m, err := b.thriftReader.ReadMap()
	if err == nil {
		err = b.checkElems(int64(m.Size))
	}
	return m, err
}

// checkLZ4Page reads the LZ4_RAW page after header h and checks that it
// decompresses into the size its header gives: the library's LZ4 codec
// doubles its buffer until a block decompresses, without bound, so a damaged
// block would take all the memory there is. buf holds the buffers, reused.
func checkLZ4Page(cr *countReader, h *format.PageHeader, buf *[2][]byte) error {
	n := int(h.CompressedPageSize)
	if cap(buf[0]) < n {
		buf[0] = make([]byte, n)
	}
	data := buf[0][:n]
	if _, err := io.ReadFull(cr, data); err != nil {
		return err
	}
	size := int(h.UncompressedPageSize)
	if v2 := h.DataPageHeaderV2; v2.Valid {
		if v2.V.IsCompressed.Valid && !v2.V.IsCompressed.V {
			return nil
		}
		levels := int64(v2.V.RepetitionLevelsByteLength) + int64(v2.V.DefinitionLevelsByteLength)
		if levels < 0 || levels > int64(n) || levels > int64(size) {
			return fmt.Errorf("a page of %d bytes with %d bytes of levels", n, levels)
		}
		data, size = data[levels:], size-int(levels)
	}
	if cap(buf[1]) < size {
		buf[1] = make([]byte, size)
	}
	if _, err := lz4.UncompressBlock(data, buf[1][:size]); err != nil {
		return fmt.Errorf("an LZ4_RAW page that does not decompress into its %d bytes: %w", size, err)
	}
	return nil
}

// pageValues is the number of values a page header says its page holds.
func pageValues(h *format.PageHeader) int32 {
	var n int32
	if d := h.DataPageHeader; d.Valid {
		n = max(n, d.V.NumValues)
	}
	if d := h.DataPageHeaderV2; d.Valid {
		n = max(n, d.V.NumValues, d.V.NumRows)
	}
	if d := h.DictionaryPageHeader; d.Valid {
		n = max(n, d.V.NumValues)
	}
	return n
}

// countReader counts the bytes read through it; discard seeks past what
// is not buffered (the pages are not read).
type countReader struct {
	r   *bufio.Reader
	sec *io.SectionReader
	n   int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

func (c *countReader) discard(n int64) (int64, error) {
	if b := int64(c.r.Buffered()); n > b && c.sec != nil {
		if _, err := c.r.Discard(int(b)); err != nil {
			return 0, err
		}
		c.n += b
		pos, err := c.sec.Seek(n-b, io.SeekCurrent)
		if err != nil {
			return b, err
		}
		if pos > c.sec.Size() {
			return b, io.ErrUnexpectedEOF
		}
		c.n += n - b
		c.r.Reset(c.sec)
		return n, nil
	}
	var done int64
	for done < n {
		k := int(min(n-done, 1<<30))
		m, err := c.r.Discard(k)
		done += int64(m)
		c.n += int64(m)
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// planSchema decides how each top-level column is written.
func (p *parquetLines) planSchema() error {
	root := p.f.Root()
	top := root.Columns()
	names := map[string]int{}
	for i, c := range top {
		names[c.Name()] = i
	}
	_, hasQ := names["query_id"]
	_, hasD := names["doc_id"]
	_, hasS := names["score"]
	_, hasR := names["relevance"]
	_, hasID := names["id"]
	if hasQ && hasD && hasS && !hasR && !hasID {
		return p.planTREC(top, names)
	}
	for _, c := range top {
		f, err := planField(c)
		if err != nil {
			return err
		}
		p.plan = append(p.plan, f)
	}
	return nil
}

// planTREC plans a TREC run's columns: each a top-level scalar.
func (p *parquetLines) planTREC(top []*parquet.Column, names map[string]int) error {
	p.trec = true
	for i, name := range []string{"query_id", "doc_id", "rank", "score", "tag"} {
		j, ok := names[name]
		if !ok {
			p.run[i] = -1
			continue
		}
		c := top[j]
		if !c.Leaf() || c.Repeated() {
			return fmt.Errorf("column %s: a TREC run's %s must be a single value, not a list or struct", name, name)
		}
		enc, err := leafEncoding(c)
		if err != nil {
			return err
		}
		want := map[string][]int{"query_id": {encString, encInt, encUint}, "doc_id": {encString, encInt, encUint}, "tag": {encString}, "rank": {encInt, encUint}, "score": {encFloat, encInt, encUint}}[name]
		ok = false
		for _, w := range want {
			ok = ok || w == enc
		}
		if !ok {
			return fmt.Errorf("column %s: a TREC run's %s must be %s, not %s", name, name, map[string]string{"query_id": "a string or an integer", "doc_id": "a string or an integer", "tag": "a string", "rank": "an integer", "score": "a number"}[name], c.Type())
		}
		p.run[i] = c.Index()
	}
	return nil
}

func planField(c *parquet.Column) (parquetField, error) {
	f := parquetField{key: jsonKey(c.Name()), lo: -1}
	leafRange(c, &f.lo, &f.hi)
	if c.Optional() || c.Repeated() {
		f.dField = 1
	}
	if c.Leaf() {
		if c.Repeated() { // a legacy list: repeated binary x
			f.kind, f.dElem, f.dItem, f.dField = fieldList, 1, 1, 0
			l, err := plainLeaf(c, nil)
			if err != nil {
				return f, err
			}
			f.leaves = []parquetLeaf{l}
			return f, nil
		}
		l, err := plainLeaf(c, nil)
		if err != nil {
			return f, err
		}
		f.kind, f.leaves = fieldScalar, []parquetLeaf{l}
		return f, nil
	}
	lt := c.Type().LogicalType()
	switch {
	case c.Repeated(): // a legacy list of structs: repeated group x {…}
		f.kind, f.dElem, f.dItem, f.dField = fieldList, 1, 1, 0
		return f, planElement(&f, c, 1)
	case isMap(lt), isMapGroup(c):
		kv := c.Columns()
		if len(kv) != 1 || !kv[0].Repeated() || len(kv[0].Columns()) != 2 {
			return f, fmt.Errorf("column %s: a map must hold one repeated group of a key and a value", c.Name())
		}
		k, v := kv[0].Columns()[0], kv[0].Columns()[1]
		if !k.Leaf() || !v.Leaf() {
			return f, fmt.Errorf("column %s: a map's key and value must be single values", c.Name())
		}
		kl, err := plainLeaf(k, nil)
		if err != nil {
			return f, err
		}
		if kl.enc != encString {
			return f, fmt.Errorf("column %s: a map's keys must be strings, not %s", c.Name(), k.Type())
		}
		vl, err := plainLeaf(v, nil)
		if err != nil {
			return f, err
		}
		f.kind, f.dElem, f.leaves = fieldMap, f.dField+1, []parquetLeaf{kl, vl}
		return f, nil
	case len(c.Columns()) == 1 && c.Columns()[0].Repeated(): // a list: x (LIST) { repeated group list { element } }
		rep := c.Columns()[0]
		f.kind, f.dElem = fieldList, f.dField+1
		f.dItem = f.dElem
		if rep.Leaf() { // two levels: x (LIST) { repeated binary element }
			l, err := plainLeaf(rep, nil)
			if err != nil {
				return f, err
			}
			f.leaves = []parquetLeaf{l}
			return f, nil
		}
		inner := rep.Columns()
		if len(inner) != 1 || rep.Name() == "array" || rep.Name() == c.Name()+"_tuple" {
			return f, planElement(&f, rep, f.dElem) // the repeated group is the element
		}
		el := inner[0]
		if el.Optional() {
			f.dItem++
		}
		if el.Leaf() {
			l, err := plainLeaf(el, nil)
			if err != nil {
				return f, err
			}
			f.leaves = []parquetLeaf{l}
			return f, nil
		}
		return f, planElement(&f, el, f.dItem)
	default: // a struct
		f.kind = fieldObject
		for _, sc := range c.Columns() {
			if !sc.Leaf() || sc.Repeated() {
				return f, fmt.Errorf("column %s.%s: a struct's fields must be single values (nesting deeper is not read)", c.Name(), sc.Name())
			}
			l, err := plainLeaf(sc, jsonKey(sc.Name()))
			if err != nil {
				return f, err
			}
			f.leaves = append(f.leaves, l)
		}
		return f, nil
	}
}

// planElement plans a list's struct elements: g's fields, each a leaf; an
// element is present (not null) from definition level d.
func planElement(f *parquetField, g *parquet.Column, d int) error {
	f.obj, f.dItem = true, d
	for _, sc := range g.Columns() {
		if !sc.Leaf() || sc.Repeated() {
			return fmt.Errorf("column %s: a list's elements must be single values or structs of single values (nesting deeper is not read)", pathName(sc))
		}
		l, err := plainLeaf(sc, jsonKey(sc.Name()))
		if err != nil {
			return err
		}
		f.leaves = append(f.leaves, l)
	}
	return nil
}

// isMap reports whether lt is the MAP annotation.
func isMap(lt *format.LogicalType) bool {
	if lt == nil {
		return false
	}
	_, ok := lt.Value.(*format.MapType)
	return ok
}

// isMapGroup reports whether c is a legacy MAP_KEY_VALUE group.
func isMapGroup(c *parquet.Column) bool {
	ct := c.Type().ConvertedType()
	return ct != nil && (*ct == 1 || *ct == 2) // MAP, MAP_KEY_VALUE
}

func leafRange(c *parquet.Column, lo, hi *int) {
	if c.Leaf() {
		if *lo < 0 {
			*lo = c.Index()
		}
		*hi = c.Index() + 1
		return
	}
	for _, sc := range c.Columns() {
		leafRange(sc, lo, hi)
	}
}

func pathName(c *parquet.Column) string {
	var b []byte
	for i, s := range c.Path() {
		if i > 0 {
			b = append(b, '.')
		}
		b = append(b, s...)
	}
	return string(b)
}

func plainLeaf(c *parquet.Column, key []byte) (parquetLeaf, error) {
	enc, err := leafEncoding(c)
	return parquetLeaf{key: key, enc: enc, dMax: c.MaxDefinitionLevel(), name: pathName(c)}, err
}

// leafEncoding is how a leaf column's values are written in JSON.
func leafEncoding(c *parquet.Column) (int, error) {
	t := c.Type()
	lt := t.LogicalType()
	ct := t.ConvertedType()
	refuse := func() (int, error) {
		return 0, fmt.Errorf("column %s: type %s is not read (use a string, an integer, a float or a boolean)", pathName(c), t)
	}
	kind, ok := leafKind(t)
	if !ok {
		return refuse()
	}
	switch kind {
	case parquet.ByteArray:
		if lt != nil && lt.Value != nil {
			switch lt.Value.(type) {
			case *format.StringType, *format.EnumType:
			case *format.JsonType:
				return encJSON, nil
			default:
				return refuse()
			}
		}
		if ct != nil && *ct == 19 { // JSON
			return encJSON, nil
		}
		if ct != nil && (*ct == 5 || *ct == 20) { // DECIMAL, BSON
			return refuse()
		}
		return encString, nil
	case parquet.Int32, parquet.Int64:
		if lt != nil && lt.Value != nil {
			it, ok := lt.Value.(*format.IntType)
			if !ok {
				return refuse()
			}
			if !it.IsSigned {
				return encUint, nil
			}
			return encInt, nil
		}
		if ct != nil {
			switch *ct {
			case 11, 12, 13, 14: // UINT_8 … UINT_64
				return encUint, nil
			case 15, 16, 17, 18: // INT_8 … INT_64
				return encInt, nil
			}
			return refuse()
		}
		return encInt, nil
	case parquet.Float, parquet.Double:
		return encFloat, nil
	case parquet.Boolean:
		return encBool, nil
	}
	return refuse()
}

// leafKind is t's physical type; false for a group's type on a leaf (a LIST
// or MAP annotation on a column without children, which the library's Kind
// panics on).
func leafKind(t parquet.Type) (k parquet.Kind, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return t.Kind(), true
}

// jsonKey is the JSON object key of name, with its colon.
func jsonKey(name string) []byte {
	return append(appendJSONString(nil, []byte(name)), ':')
}

// The rows are made into lines by a goroutine, a batch of lines ahead of
// the reader (two cores decode and parse at once); a batch holds whole lines,
// about parquetBatch bytes (more for one long row).
const parquetBatch = 256 << 10

type lineBatch struct {
	b   []byte
	err error
}

// start starts the goroutine that makes the lines.
func (p *parquetLines) start() {
	p.ch = make(chan lineBatch, 1)
	p.free = make(chan []byte, 2)
	p.done = make(chan struct{})
	p.exited = make(chan struct{})
	p.free <- make([]byte, 0, parquetBatch+4096)
	p.free <- make([]byte, 0, parquetBatch+4096)
	go p.produce()
}

func (p *parquetLines) produce() {
	defer close(p.exited)
	for {
		var buf []byte
		select {
		case buf = <-p.free:
		case <-p.done:
			return
		}
		buf = buf[:0]
		var err error
		for len(buf) < parquetBatch {
			if err = p.next(); err != nil {
				break
			}
			buf = append(buf, p.line...)
		}
		select {
		case p.ch <- lineBatch{buf, err}:
		case <-p.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read reads the lines.
func (p *parquetLines) Read(b []byte) (int, error) {
	if p.ch == nil { // the first read starts the goroutine (a shard opened and not read costs no decoding)
		p.start()
	}
	for p.off == len(p.cur) {
		if p.err != nil {
			return 0, p.err
		}
		if p.cur != nil {
			p.free <- p.cur
			p.cur = nil
		}
		lb := <-p.ch
		p.cur, p.off, p.err = lb.b, 0, lb.err
		if len(p.cur) == 0 && p.err != nil {
			return 0, p.err
		}
	}
	n := copy(b, p.cur[p.off:])
	p.off += n
	return n, nil
}

// Close stops the goroutine and releases the row group being read.
func (p *parquetLines) Close() error {
	if p.done != nil {
		close(p.done)
		<-p.exited
		p.done = nil
	}
	if p.rows != nil {
		err := p.rows.Close()
		p.rows = nil
		return err
	}
	return nil
}

// next makes the next row's line; io.EOF after the last.
func (p *parquetLines) next() error {
	for p.bi == p.bn {
		if err := p.fill(); err != nil {
			return err
		}
	}
	row := p.buf[p.bi]
	p.bi++
	p.row++
	p.line = p.line[:0]
	var err error
	if p.trec {
		p.line, err = p.trecLine(p.line, row)
	} else {
		p.line, err = p.jsonLine(p.line, row)
	}
	if err != nil {
		return err
	}
	if len(p.line) > MaxParquetLine {
		return Errorf(p.name, int(p.row), "row longer than %d MiB as a line", MaxParquetLine>>20)
	}
	p.line = append(p.line, '\n')
	return nil
}

// rowValuesBudget is about how many values one read of rows holds (24 bytes
// each as parquet.Values).
const rowValuesBudget = 1 << 16

// readRowsAtOnce is how many rows of g to read at a time, at most max: as many
// as hold about rowValuesBudget values at the row group's mean values per row
// (its column chunks' values over its rows), at least one. A read of rows
// holds them all before any is looked at, so 256 rows of millions of values
// each (a 30 KB file of runs of zeros) took 2.8 GB; now a read holds about one
// such row, which is then refused (jsonpos.MaxValues).
func readRowsAtOnce(g parquet.RowGroup, limit int) int {
	var values int64
	for _, c := range g.ColumnChunks() {
		values += c.NumValues()
	}
	per := values / max(g.NumRows(), 1)
	if per <= 0 {
		return limit
	}
	return int(min(int64(limit), max(1, rowValuesBudget/per)))
}

// fill reads the next rows into buf.
func (p *parquetLines) fill() (err error) {
	defer func() {
		if r := recover(); r != nil { // the library's panics on a damaged page
			err = Errorf(p.name, int(p.row+1), "not a valid Parquet file: %v", r)
		}
	}()
	if err := p.ctx.Err(); err != nil {
		return err
	}
	if p.rows == nil {
		groups := p.f.RowGroups()
		if p.rg == len(groups) {
			return io.EOF
		}
		p.rows = groups[p.rg].Rows()
		p.per = readRowsAtOnce(groups[p.rg], len(p.buf))
		p.rg++
	}
	n, err := p.rows.ReadRows(p.buf[:p.per])
	p.bi, p.bn = 0, n
	for i, row := range p.buf[:n] {
		if len(row) > jsonpos.MaxValues {
			return Errorf(p.name, int(p.row)+i+1, "the row holds %s values, more than %s (the cap on what a record may take in memory)", rgformat.Thousands(len(row)), rgformat.Thousands(jsonpos.MaxValues))
		}
	}
	if errors.Is(err, io.EOF) {
		cerr := p.rows.Close()
		p.rows = nil
		if n == 0 && cerr != nil {
			return Errorf(p.name, int(p.row+1), "not a valid Parquet file: row group %d: %v", p.rg-1, cerr)
		}
		return nil
	}
	if err != nil {
		return Errorf(p.name, int(p.row+1), "not a valid Parquet file: row group %d: %v", p.rg-1, err)
	}
	if n == 0 { // no rows and no error: a damaged row group would loop here
		return Errorf(p.name, int(p.row+1), "not a valid Parquet file: row group %d gave no row", p.rg-1)
	}
	return nil
}

// split sets cols[c] to the values of leaf column c in row.
func (p *parquetLines) split(row parquet.Row) error {
	for c := range p.cols {
		p.cols[c] = nil
	}
	start := 0
	for i := 1; i <= len(row); i++ {
		if i == len(row) || row[i].Column() != row[start].Column() {
			c := row[start].Column()
			if c < 0 || c >= len(p.cols) {
				return Errorf(p.name, int(p.row), "not a valid Parquet file: a value of column %d, which the schema does not have", c)
			}
			p.cols[c] = row[start:i]
			start = i
		}
	}
	return nil
}

func (p *parquetLines) jsonLine(b []byte, row parquet.Row) ([]byte, error) {
	if err := p.split(row); err != nil {
		return b, err
	}
	b = append(b, '{')
	first := true
	for i := range p.plan {
		f := &p.plan[i]
		vs := p.cols[f.lo]
		if len(vs) == 0 {
			return b, Errorf(p.name, int(p.row), "not a valid Parquet file: no value of column %s", f.leaves[0].name)
		}
		if vs[0].DefinitionLevel() < f.dField {
			continue // null: left out
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, f.key...)
		var err error
		switch f.kind {
		case fieldScalar:
			b, err = p.appendValue(b, &f.leaves[0], vs[0])
		case fieldObject:
			b, err = p.appendObject(b, f, 0)
		case fieldList:
			b, err = p.appendList(b, f)
		case fieldMap:
			b, err = p.appendMap(b, f)
		}
		if err != nil {
			return b, err
		}
		if len(b) > MaxParquetLine {
			return b, Errorf(p.name, int(p.row), "row longer than %d MiB as a line", MaxParquetLine>>20)
		}
	}
	return append(b, '}'), nil
}

// appendObject writes f's leaves' k-th values as an object, nulls left out.
func (p *parquetLines) appendObject(b []byte, f *parquetField, k int) ([]byte, error) {
	b = append(b, '{')
	first := true
	for j := range f.leaves {
		l := &f.leaves[j]
		vs := p.cols[f.lo+j]
		if k >= len(vs) {
			return b, Errorf(p.name, int(p.row), "not a valid Parquet file: column %s has fewer values than its siblings", l.name)
		}
		v := vs[k]
		if v.DefinitionLevel() < l.dMax {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, l.key...)
		var err error
		if b, err = p.appendValue(b, l, v); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func (p *parquetLines) appendList(b []byte, f *parquetField) ([]byte, error) {
	vs := p.cols[f.lo]
	b = append(b, '[')
	if vs[0].DefinitionLevel() < f.dElem { // an empty list
		return append(b, ']'), nil
	}
	for k, v := range vs {
		if k > 0 {
			b = append(b, ',')
		}
		switch {
		case v.DefinitionLevel() < f.dItem:
			b = append(b, "null"...)
		case f.obj:
			var err error
			if b, err = p.appendObject(b, f, k); err != nil {
				return b, err
			}
		case v.DefinitionLevel() < f.leaves[0].dMax:
			b = append(b, "null"...)
		default:
			var err error
			if b, err = p.appendValue(b, &f.leaves[0], v); err != nil {
				return b, err
			}
		}
		if len(b) > MaxParquetLine {
			return b, Errorf(p.name, int(p.row), "row longer than %d MiB as a line", MaxParquetLine>>20)
		}
	}
	return append(b, ']'), nil
}

func (p *parquetLines) appendMap(b []byte, f *parquetField) ([]byte, error) {
	keys, vals := p.cols[f.lo], p.cols[f.lo+1]
	b = append(b, '{')
	if keys[0].DefinitionLevel() < f.dElem {
		return append(b, '}'), nil
	}
	if len(vals) != len(keys) {
		return b, Errorf(p.name, int(p.row), "not a valid Parquet file: map %s has %d keys and %d values", f.leaves[0].name, len(keys), len(vals))
	}
	for k, kv := range keys {
		if kv.DefinitionLevel() < f.leaves[0].dMax {
			return b, Errorf(p.name, int(p.row), "column %s: a null map key", f.leaves[0].name)
		}
		if k > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, kv.ByteArray())
		b = append(b, ':')
		if vals[k].DefinitionLevel() < f.leaves[1].dMax {
			b = append(b, "null"...)
			continue
		}
		var err error
		if b, err = p.appendValue(b, &f.leaves[1], vals[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func (p *parquetLines) appendValue(b []byte, l *parquetLeaf, v parquet.Value) ([]byte, error) {
	switch l.enc {
	case encString:
		return appendJSONString(b, v.ByteArray()), nil
	case encJSON:
		j := v.ByteArray()
		if !json.Valid(j) {
			return b, Errorf(p.name, int(p.row), "column %s: not a JSON value (the column is annotated JSON)", l.name)
		}
		start := len(b)
		b = append(b, j...)
		for i := start; i < len(b); i++ { // white space between tokens: a line stays one line
			if b[i] == '\n' || b[i] == '\r' {
				b[i] = ' '
			}
		}
		return b, nil
	case encInt:
		return strconv.AppendInt(b, v.Int64(), 10), nil
	case encUint:
		if v.Kind() == parquet.Int32 {
			return strconv.AppendUint(b, uint64(v.Uint32()), 10), nil
		}
		return strconv.AppendUint(b, v.Uint64(), 10), nil
	case encFloat:
		x := v.Double()
		if v.Kind() == parquet.Float {
			x = float64(v.Float())
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return b, Errorf(p.name, int(p.row), "column %s: %v is not a number JSON can hold", l.name, x)
		}
		return appendJSONFloat(b, x), nil
	case encBool:
		return strconv.AppendBool(b, v.Boolean()), nil
	}
	return b, nil
}

// appendJSONFloat writes x as encoding/json does: the shortest decimal that
// reads back as x.
func appendJSONFloat(b []byte, x float64) []byte {
	abs := math.Abs(x)
	fmtc := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmtc = 'e'
	}
	return strconv.AppendFloat(b, x, fmtc, -1, 64)
}

// appendJSONString writes s as a JSON string: quote, backslash and control
// characters escaped, other bytes as they are (the JSONL readers take invalid
// UTF-8 as they take it in a file).
func appendJSONString(b, s []byte) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigit = "0123456789abcdef"

// trecLine writes a TREC run line: query_id Q0 doc_id rank score tag.
func (p *parquetLines) trecLine(b []byte, row parquet.Row) ([]byte, error) {
	if err := p.split(row); err != nil {
		return b, err
	}
	names := [5]string{"query_id", "doc_id", "rank", "score", "tag"}
	for i, c := range p.run {
		if i == 1 {
			b = append(b, " Q0"...)
		}
		if i > 0 {
			b = append(b, ' ')
		}
		if c < 0 {
			if i == 2 {
				b = append(b, '0')
			} else {
				b = append(b, "parquet"...)
			}
			continue
		}
		vs := p.cols[c]
		if len(vs) != 1 || vs[0].IsNull() {
			return b, Errorf(p.name, int(p.row), "column %s is null: a TREC run needs it on every row", names[i])
		}
		v := vs[0]
		switch v.Kind() {
		case parquet.ByteArray:
			s := v.ByteArray()
			if len(s) == 0 || bytes.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) || !utf8.Valid(s) {
				return b, Errorf(p.name, int(p.row), "column %s: %q cannot be a TREC field (empty, or it holds white space or a control character)", names[i], s)
			}
			b = append(b, s...)
		case parquet.Int32:
			b = strconv.AppendInt(b, int64(v.Int32()), 10)
		case parquet.Int64:
			b = strconv.AppendInt(b, v.Int64(), 10)
		case parquet.Float, parquet.Double:
			x := v.Double()
			if v.Kind() == parquet.Float {
				x = float64(v.Float())
			}
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return b, Errorf(p.name, int(p.row), "column score: %v is not a finite number", x)
			}
			b = appendJSONFloat(b, x)
		default:
			return b, Errorf(p.name, int(p.row), "column %s: a %s value", names[i], v.Kind())
		}
	}
	return b, nil
}

// errNotParquet is returned by openParquetFile for a file that is not Parquet.
var errNotParquet = errors.New("not a Parquet file")

// openParquetFile opens the Parquet file f (named name) as lines; errNotParquet
// when f is not a regular file starting with the magic bytes.
func openParquetFile(ctx context.Context, name string, f *os.File) (*parquetLines, error) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || !isParquetFile(f) {
		return nil, errNotParquet
	}
	return openParquet(ctx, name, f, st.Size())
}
