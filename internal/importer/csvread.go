package importer

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// csvReader reads CSV records as encoding/csv's Reader does with its defaults
// and ReuseRecord (RFC 4180: fields separated by commas, a field in double
// quotes may hold commas, line breaks and "" for a quote; "\r\n" read as
// "\n", a "\r" that ends the input dropped, empty lines skipped, every record
// as wide as the first; the same errors at the same lines), but bounded
// while it reads: a record over max bytes of input, or of more than
// input.MaxCSVSeparators commas, is refused when its bytes pass the cap,
// having held no more than the cap and one piece of bufio's buffer.
// encoding/csv grows its line and field buffers by append, and held about
// five times the cap before the cap's reader behind it stopped it (316 MB for
// an 80 MiB quoted cell against the 64 MiB cap).
//
// The fields' bytes are kept in chunks of csvChunk bytes and joined into one
// string when the record is whole, as encoding/csv does.
type csvReader struct {
	br    *bufio.Reader
	max   int64 // the cap of one record, in bytes of input (its newline included)
	width int   // the fields of the first record; 0 before it

	line      int  // the line being read (1-based)
	pending   bool // a line break inside a quoted field was read: the next byte starts line+1
	startLine int  // the line where the last record started
	endLine   int  // the line where the last record ended

	n      int64 // bytes of input of the record so far
	seps   int   // commas of the record so far (quoted ones too)
	chunks [][]byte
	used   int   // chunks[:used] hold the record's field bytes
	size   int   // the field bytes held
	ends   []int // the end of each field, in the field bytes
	rec    []string
}

// csvChunk is the size of a chunk of a record's field bytes.
const csvChunk = 64 << 10

// csvError is a parse error of csvReader, as encoding/csv's *csv.ParseError
// words it (its Err is csv.ErrBareQuote, csv.ErrQuote or csv.ErrFieldCount).
type csvError struct {
	Line int
	Err  error
}

func (e *csvError) Error() string { return e.Err.Error() }
func (e *csvError) Unwrap() error { return e.Err }

func newCSVReader(br *bufio.Reader) *csvReader { return &csvReader{br: br, max: maxRecord} }

// The states of the record being read.
const (
	csvFieldStart  = iota // before a field's first byte
	csvUnquoted           // in a field not quoted
	csvUnquotedCR         // a "\r" read in a field not quoted (a "\r\n" line end, or data)
	csvQuoted             // in a quoted field
	csvQuotedCR           // a "\r" read in a quoted field
	csvQuoteSeen          // a '"' read in a quoted field: its end, or the first of ""
	csvQuoteSeenCR        // "\r" after a quoted field's end
)

// Read returns the next record (valid until the next call), io.EOF after the
// last, a *csvError, errRecordTooLong or input.ErrTooManySeparators.
func (r *csvReader) Read() ([]string, error) {
	r.n, r.seps, r.used, r.size = 0, 0, 0, 0
	r.ends = r.ends[:0]
	// Empty lines before the record are skipped (and count towards its cap).
	for {
		b, err := r.br.Peek(2)
		if len(b) == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, err
		}
		skip := 0
		switch {
		case b[0] == '\n':
			skip = 1
		case b[0] == '\r' && len(b) == 2 && b[1] == '\n':
			skip = 2
		case b[0] == '\r' && len(b) == 1 && errors.Is(err, io.EOF):
			skip = 1 // a "\r" that ends the input is dropped: an empty line
		}
		if skip == 0 {
			break
		}
		_, _ = r.br.Discard(skip)
		r.line++
		if r.n += int64(skip); r.n > r.max {
			return nil, errRecordTooLong
		}
	}
	r.line++
	recLine := r.line
	r.startLine = recLine
	st := csvFieldStart
	crLine := false // the last byte read is a "\r" that started a line
	for {
		b, rerr := r.br.ReadSlice('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, bufio.ErrBufferFull) {
			return nil, rerr
		}
		if r.n += int64(len(b)); r.n > r.max {
			return nil, errRecordTooLong
		}
		if r.seps += bytes.Count(b, []byte{','}); r.seps > input.MaxCSVSeparators {
			return nil, input.ErrTooManySeparators
		}
		done := false
		for i := 0; i < len(b) && !done; {
			if r.pending {
				r.line++
				r.pending = false
				crLine = b[i] == '\r'
			} else {
				crLine = false
			}
			switch st {
			case csvFieldStart:
				if b[i] == '"' {
					st = csvQuoted
					i++
				} else {
					st = csvUnquoted
				}
			case csvUnquoted:
				j := i
				for j < len(b) && b[j] != ',' && b[j] != '"' && b[j] != '\n' && b[j] != '\r' {
					j++
				}
				r.add(b[i:j])
				if i = j; i == len(b) {
					break
				}
				switch b[i] {
				case ',':
					r.endField()
					st = csvFieldStart
				case '\n':
					r.endField()
					done = true
				case '\r':
					st = csvUnquotedCR
				case '"':
					return nil, &csvError{Line: r.line, Err: csv.ErrBareQuote}
				}
				i++
			case csvUnquotedCR:
				if b[i] == '\n' {
					r.endField()
					done = true
					i++
				} else {
					r.add([]byte{'\r'})
					st = csvUnquoted
				}
			case csvQuoted:
				j := i
				for j < len(b) && b[j] != '"' && b[j] != '\n' && b[j] != '\r' {
					j++
				}
				r.add(b[i:j])
				if i = j; i == len(b) {
					break
				}
				switch b[i] {
				case '"':
					st = csvQuoteSeen
				case '\n':
					r.add([]byte{'\n'})
					r.pending = true
				case '\r':
					st = csvQuotedCR
				}
				i++
			case csvQuotedCR:
				if b[i] == '\n' {
					r.add([]byte{'\n'})
					r.pending = true
					i++
				} else {
					r.add([]byte{'\r'})
				}
				st = csvQuoted
			case csvQuoteSeen:
				switch b[i] {
				case '"':
					r.add([]byte{'"'})
					st = csvQuoted
				case ',':
					r.endField()
					st = csvFieldStart
				case '\n':
					r.endField()
					done = true
				case '\r':
					st = csvQuoteSeenCR
				default:
					return nil, &csvError{Line: r.line, Err: csv.ErrQuote}
				}
				i++
			case csvQuoteSeenCR:
				if b[i] != '\n' {
					return nil, &csvError{Line: r.line, Err: csv.ErrQuote}
				}
				r.endField()
				done = true
				i++
			}
		}
		if !done && errors.Is(rerr, io.EOF) {
			// The input ends the record (a "\r" before its end is dropped).
			switch st {
			case csvQuoted, csvQuotedCR:
				line := r.line
				if st == csvQuotedCR && crLine {
					line-- // a line of a "\r" that ends the input is empty: not counted
				}
				return nil, &csvError{Line: line, Err: csv.ErrQuote}
			}
			r.endField()
			done = true
		}
		if done {
			break
		}
	}
	r.endLine = r.line
	rec := r.record()
	if r.width == 0 {
		r.width = len(rec)
	} else if len(rec) != r.width {
		return rec, &csvError{Line: recLine, Err: csv.ErrFieldCount}
	}
	return rec, nil
}

// add appends b to the record's field bytes.
func (r *csvReader) add(b []byte) {
	for len(b) > 0 {
		if r.used == 0 || len(r.chunks[r.used-1]) == cap(r.chunks[r.used-1]) {
			if r.used == len(r.chunks) {
				r.chunks = append(r.chunks, make([]byte, 0, csvChunk))
			}
			r.chunks[r.used] = r.chunks[r.used][:0]
			r.used++
		}
		c := &r.chunks[r.used-1]
		n := min(len(b), cap(*c)-len(*c))
		*c = append(*c, b[:n]...)
		b = b[n:]
		r.size += n
	}
}

func (r *csvReader) endField() { r.ends = append(r.ends, r.size) }

// record is the fields, sliced from one string of the field bytes; the
// chunks of a large record are then given up, so that they are not held
// beside it while it is converted.
func (r *csvReader) record() []string {
	var s string
	switch r.used {
	case 0:
	case 1:
		s = string(r.chunks[0])
	default:
		var sb strings.Builder
		sb.Grow(r.size)
		for _, c := range r.chunks[:r.used] {
			sb.Write(c)
		}
		s = sb.String()
	}
	if len(r.chunks) > 16 {
		r.chunks = r.chunks[:1]
	}
	r.rec = r.rec[:0]
	start := 0
	for _, end := range r.ends {
		r.rec = append(r.rec, s[start:end])
		start = end
	}
	return r.rec
}
