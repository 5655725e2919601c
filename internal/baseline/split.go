package baseline

import (
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// The load reads the inflated stream straight into the batches' buffers in
// large reads and splits the lines where they lie (issue 23): no
// bufio.Scanner, whose buffer every line was copied out of into the batch.
// The lines, their numbers and the errors are those of a bufio.Scanner with
// ScanLines and a maxLine-byte buffer followed by Source's trimming: a line
// ends at '\n'; trailing '\r's are dropped, and a UTF-8 BOM at the start of
// line 1; blank lines are counted but not returned; a last line without '\n'
// is a line; a line of maxLine bytes or more (before its '\n', '\r's counted)
// is "line longer than" at its number; a read error ends the input after the
// lines read before it, the partial last one included (FuzzSplitLines holds
// the splitter to bufio.Scanner). One difference: a last line without '\n' of
// exactly maxLine bytes is always too long here; the scanner let it through
// when the reader returned its last bytes and io.EOF from one call. A batch's
// buffer grows to hold a long line: to at most about twice maxLine; blank
// lines before a batch's first line are dropped as they are split, so they
// never grow it (a batch holds at most batchBytes and one line besides).

// readChunk is the least free space a read into a batch buffer is given.
const readChunk = 64 << 10

// errTooLong stands for bufio.ErrTooLong: a line of maxLine bytes or more.
var errTooLong = errors.New("line too long")

// fill reads the next lines into lb: from the first line after the last one
// taken, until lb holds maxLines lines, or batchBytes bytes were read and it
// holds at least one line, or the input ends (then lb.readErr is io.EOF, or the error that ended it). lb.buf holds
// the lines where they were read (with their newlines, the blank lines
// between them and, before the first, the pending first line); lb.used is
// the length of the part that holds them. What was read beyond it is kept
// for the next call.
func (s *Source) fill(lb *lineBatch, maxLines int) {
	buf := lb.buf[:0]
	lb.starts, lb.ends, lb.lnos, lb.readErr = lb.starts[:0], lb.ends[:0], lb.lnos[:0], nil
	if s.pending != nil { // Open's first line, a case (cases-out)
		buf = append(buf, s.pending...)
		buf = append(buf, '\n')
		lb.starts, lb.ends, lb.lnos = append(lb.starts, 0), append(lb.ends, len(s.pending)), append(lb.lnos, s.pendingLine)
		s.pending = nil
	}
	pos := len(buf) // start of the first line not split yet
	buf = append(buf, s.rest...)
	s.rest = s.rest[:0]
	empties := 0
	for {
		for len(lb.starts) < maxLines {
			nl := bytes.IndexByte(buf[pos:], '\n')
			if nl < 0 {
				break
			}
			if nl >= s.maxLine {
				lb.readErr = s.tooLong()
				lb.buf, lb.used = buf, pos
				return
			}
			s.add(lb, buf, pos, pos+nl)
			pos += nl + 1
		}
		// Full: maxLines lines, or batchBytes read and at least one line.
		if len(lb.starts) >= maxLines || len(lb.starts) > 0 && len(buf) >= batchBytes {
			break
		}
		if len(buf)-pos >= s.maxLine {
			lb.readErr = s.tooLong()
			lb.buf, lb.used = buf, pos
			return
		}
		if s.readErr != nil { // the input ended: what is left is its last line
			if pos < len(buf) {
				s.add(lb, buf, pos, len(buf))
				pos = len(buf)
			}
			lb.readErr = s.readError(s.readErr)
			break
		}
		if len(lb.starts) == 0 && pos > 0 {
			// Nothing but blank lines split so far: drop them before reading on,
			// so that a run of blank lines (a gigabyte of newlines inflated from
			// a megabyte of gzip) never grows the buffer.
			buf = buf[:copy(buf, buf[pos:])]
			pos = 0
		}
		if cap(buf)-len(buf) < readChunk {
			buf = slices.Grow(buf, max(readChunk, batchBytes+readChunk-len(buf), len(buf)-pos))
		}
		n, err := s.in.Read(buf[len(buf):cap(buf)])
		if n < 0 || n > cap(buf)-len(buf) {
			n, err = 0, errBadReadCount
		}
		buf = buf[:len(buf)+n]
		switch {
		case err != nil:
			s.readErr = err
		case n == 0:
			if empties++; empties > 100 {
				s.readErr = io.ErrNoProgress
			}
		default:
			empties = 0
		}
	}
	s.rest = append(s.rest, buf[pos:]...)
	lb.buf, lb.used = buf, pos
}

var errBadReadCount = errors.New("baseline: read returned an impossible count")

// add counts the line buf[start:end] and adds it to lb unless it is blank.
func (s *Source) add(lb *lineBatch, buf []byte, start, end int) {
	s.line++
	for end > start && buf[end-1] == '\r' {
		end--
	}
	if s.line == 1 && bytes.HasPrefix(buf[start:end], []byte("\xef\xbb\xbf")) {
		start += 3
	}
	if len(bytes.TrimSpace(buf[start:end])) == 0 {
		return
	}
	lb.starts, lb.ends, lb.lnos = append(lb.starts, start), append(lb.ends, end), append(lb.lnos, s.line)
}

// tooLong is the error of a line of maxLine bytes or more (the next line's).
func (s *Source) tooLong() error {
	s.readErr = errTooLong
	return s.readError(errTooLong)
}

// readError is the error that ended the input, as Source reports it at the
// next line: io.EOF at its end.
func (s *Source) readError(err error) error {
	switch {
	case err == io.EOF: //nolint:errorlint // as bufio.Scanner: only the reader's own io.EOF ends the input
		return io.EOF
	case errors.Is(err, errTooLong):
		return input.Errorf(s.File, s.line+1, "line longer than %d bytes", s.maxLine)
	}
	return input.Errorf(s.File, s.line+1, "cannot read: %v", err)
}
