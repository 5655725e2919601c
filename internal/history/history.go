// Package history keeps the runs of check and compare: an append-only JSONL
// file, one record per run (time, commit, branch, the command's full JSON
// document and a fingerprint of its inputs), safe under concurrent appends.
package history

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/filelock"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// Schema is the schema id of a history record.
const Schema = "retrieval-gate/history@1"

// FileName is the history file inside a --history directory.
const FileName = "history.jsonl"

// ReportPath is the form of a record's report: reports/NAME.html, NAME of
// letters, digits, '.', '_' and '-' (a relative link that cannot leave the
// directory of the history or carry a scheme).
var ReportPath = regexp.MustCompile(`^reports/[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}\.html$`)

// MaxRecord is the longest record line read back (a document of a very large
// comparison lists its failed queries).
const MaxRecord = 256 << 20

// Record is one run. Keys are in alphabetical order, as in every JSON report.
type Record struct {
	Branch      string          `json:"branch"`
	Command     string          `json:"command"` // "check" or "compare"
	Commit      string          `json:"commit"`
	Document    json.RawMessage `json:"document"` // the command's --json document, verbatim
	Fingerprint Fingerprint     `json:"fingerprint"`
	// Report is the run's HTML report published beside a history kept on a
	// branch (--history-branch): a path relative to the history file, matching
	// ReportPath. Optional, added to retrieval-gate/history@1 (readers that do not
	// know it ignore it).
	Report string `json:"report,omitempty"`
	Schema string `json:"schema"`
	Time   string `json:"time"` // RFC 3339, UTC

	Line int `json:"-"` // line in the history file (Scan)
}

// Fingerprint identifies the inputs of a run: the SHA-256 of each input file
// (a directory: of its files' relative paths and contents, sorted), the
// parameters that change the numbers, and a digest of both. Two runs with the
// same digest measured the same thing.
type Fingerprint struct {
	Digest string            `json:"digest"`
	Inputs map[string]string `json:"inputs"` // role (cases, kb, qrels, run:NAME) -> "sha256:…"
	Params map[string]string `json:"params"` // k, gain, … as given
}

// NewFingerprint hashes the input files (role -> path) and adds the
// parameters. The hashing stops with ctx's error once ctx ends (a read at a
// time: inputs of gigabytes take seconds to hash).
func NewFingerprint(ctx context.Context, inputs, params map[string]string) (Fingerprint, error) {
	fp := Fingerprint{Inputs: map[string]string{}, Params: map[string]string{}}
	for role, path := range inputs {
		h, err := hashPath(ctx, path)
		if err != nil {
			return Fingerprint{}, fmt.Errorf("fingerprint of %s: %w", path, err)
		}
		fp.Inputs[role] = h
	}
	for k, v := range params {
		fp.Params[k] = v
	}
	fp.Digest = fp.digest()
	return fp, nil
}

func (fp Fingerprint) digest() string {
	h := sha256.New()
	for _, m := range []map[string]string{fp.Inputs, fp.Params} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(h, "%q=%q\n", k, m[k])
		}
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Changed lists what differs from the previous fingerprint: input roles and
// parameters added, removed or changed, sorted.
func (fp Fingerprint) Changed(prev Fingerprint) []string {
	var out []string
	diff := func(kind string, a, b map[string]string) {
		for k, v := range b {
			if w, ok := a[k]; !ok || w != v {
				out = append(out, kind+k)
			}
		}
		for k := range a {
			if _, ok := b[k]; !ok {
				out = append(out, kind+k+" (removed)")
			}
		}
	}
	diff("", prev.Inputs, fp.Inputs)
	diff("--", prev.Params, fp.Params)
	slices.Sort(out)
	return out
}

// hashFile adds "REL SIZE\n" and the content of the file at p to h, streamed
// (a directory's files were read whole: a large file beside the cards took
// its size in memory).
func hashFile(ctx context.Context, h io.Writer, p, rel string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "%q %d\n", rel, st.Size())
	n, err := io.Copy(h, ctxReader{ctx, f})
	if err != nil {
		return err
	}
	if n != st.Size() {
		return fmt.Errorf("%s changed while it was read (%d bytes, %d expected)", p, n, st.Size())
	}
	return nil
}

// regular refuses a history file that is not a regular file before it is
// opened: a named pipe would be waited on for ever (open and read with no
// writer; a record appended past the pipe's buffer), whatever signal comes.
func regular(file string) error {
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("history %s is not a regular file (%s): a history is a file that check and compare append to", file, st.Mode().Type())
	}
	return nil
}

// ctxReader reads r until ctx ends, then fails with ctx's error.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func hashPath(ctx context.Context, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if !st.IsDir() && !st.Mode().IsRegular() {
		// A pipe or FIFO was read once, by the command: opening it again would
		// wait for another writer. Its content is not known here.
		return "unhashed:" + st.Mode().Type().String(), nil
	}
	if !st.IsDir() {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if _, err := io.Copy(h, ctxReader{ctx, f}); err != nil {
			return "", err
		}
		return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
	}
	// A directory named through a symbolic link (kb -> shared/kb) is its
	// target's files, as the knowledge base reads them: WalkDir would not
	// follow the link.
	if path, err = filepath.EvalSymlinks(path); err != nil {
		return "", err
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err // a large tree (a .git in the KB) takes seconds to walk
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	slices.Sort(files)
	for _, p := range files {
		rel, _ := filepath.Rel(path, p)
		if err := hashFile(ctx, h, p, filepath.ToSlash(rel)); err != nil {
			return "", err
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// File resolves --history: a path ending in .jsonl is the file; anything else
// is a directory (created if needed) holding FileName.
func File(path string) string {
	if strings.HasSuffix(path, ".jsonl") {
		return path
	}
	return filepath.Join(path, FileName)
}

// Line is the record as a line of the history: its schema set, the document
// compacted, keys sorted, ending in a newline.
func Line(rec Record) ([]byte, error) {
	rec.Schema = Schema
	if !json.Valid(rec.Document) {
		return nil, errors.New("history: the document is not valid JSON")
	}
	var doc bytes.Buffer
	if err := json.Compact(&doc, rec.Document); err != nil {
		return nil, err
	}
	rec.Document = doc.Bytes()
	line, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	// What the reader would refuse is not written: a history stays readable.
	if len(line) > MaxRecord {
		return nil, fmt.Errorf("history: the record is %d bytes, more than a history reads back (%d MiB)", len(line), MaxRecord>>20)
	}
	check := jsonpos.Scanner{MaxValues: jsonpos.DocumentMaxValues}
	if err := check.Check(line); err != nil {
		return nil, fmt.Errorf("history: the record is not one a history reads back: %w", err)
	}
	return append(line, '\n'), nil
}

// AppendUndo adds the record as one line to the history at path (see File). The
// line is written by a single write(2) on a file opened with O_APPEND, under an
// exclusive advisory lock where the system has one, so concurrent runs never
// interleave or lose a record. A failed or short write (ENOSPC, EDQUOT, EFBIG)
// is undone: the file is cut back to its old size, so no torn line is left. A
// torn last line left by an older run (no newline, not a record) is dropped
// first, and warning says so; a complete last record without its newline gets
// one, and the warning of that torn line is returned. It also returns how to
// take the append back, for a run whose outputs could not be published after
// it (atomicfile.Append):
// undo puts the file back as it was (a torn last line it dropped included; a
// history this append created is left empty, as removing it could lose a
// record a concurrent run is about to append to it). It refuses, keeping the
// record, when another run has appended since.
func AppendUndo(ctx context.Context, path string, rec Record) (warning string, undo func() error, err error) {
	line, err := Line(rec)
	if err != nil {
		return "", nil, err
	}
	file := File(path)
	if dir := filepath.Dir(file); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: an output directory, 0755 like atomicfile's, so CI steps and other users can read the history
			return "", nil, err
		}
	}
	if err := regular(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", nil, err
	}
	f, err := os.OpenFile(file, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644) //nolint:gosec // G302: an output, 0644 like the reports atomicfile writes
	if err != nil {
		return "", nil, err
	}
	unlock, err := filelock.Lock(ctx, f)
	if err != nil {
		f.Close()
		return "", nil, fmt.Errorf("lock %s: %w", file, err)
	}
	// The append is the first step of the run's commit: a run whose
	// context has ended (a signal that came during a step that does not
	// watch it, or before a lock that was free) appends nothing.
	if err := ctx.Err(); err != nil {
		unlock()
		f.Close()
		return "", nil, fmt.Errorf("append to %s: %w", file, err)
	}
	a, werr := appendLocked(f, file, line)
	unlock()
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return a.warning, nil, fmt.Errorf("append to %s: %w", file, werr)
	}
	return a.warning, func() error { return a.undo(ctx, file) }, nil
}

// appendWriter is where appendLocked writes (a test replaces it with a failing one).
var appendWriter = func(f *os.File) io.Writer { return f }

// appended is what an append changed: at size it wrote line, after dropping tail.
type appended struct {
	warning    string
	size       int64
	tail, line []byte
}

func appendLocked(f *os.File, file string, line []byte) (a appended, err error) {
	st, err := f.Stat()
	if err != nil {
		return a, err
	}
	size := st.Size()
	if size > 0 {
		tail, lineNo, err := lastLine(f, size)
		if err != nil {
			return a, err
		}
		if int64(len(tail)) == size && bytes.HasPrefix(tail, input.BOM) {
			// A BOM at the start of the file is the file's, read past by
			// every reader: it stays whatever the line after it is.
			tail = tail[len(input.BOM):]
		}
		if len(tail) > 0 {
			if t := bytes.TrimSpace(tail); len(t) == 0 || validLine(t) {
				line = append([]byte{'\n'}, line...) // end it, then append
			} else {
				if err := f.Truncate(size - int64(len(tail))); err != nil {
					return a, err
				}
				size -= int64(len(tail))
				a.tail = tail
				a.warning = fmt.Sprintf("%s:%d: dropped a torn last line (%d bytes, no newline; an interrupted or failed write)", file, lineNo, len(tail))
			}
		}
	}
	a.size, a.line = size, line
	n, err := appendWriter(f).Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		// Undo the partial line: the history stays as it was.
		if terr := f.Truncate(size); terr != nil {
			return a, fmt.Errorf("%w; restoring the old size failed too: %v", err, terr) //nolint:errorlint // the first error is the cause
		}
		return a, err
	}
	return a, nil
}

// undo takes the append a back from file, under the lock: the file is cut back
// to its size before the line and the torn tail the append dropped is written
// back. When the file no longer ends with the line (another run appended since),
// the record stays and the error says so.
func (a appended) undo(ctx context.Context, file string) error {
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("--history: taking this run's record back from %s: %w", file, err)
	}
	defer f.Close()
	// A run's end, also after SIGINT: the lock is waited for a second at most
	// (this run held it a moment ago), then the record stays and the error
	// says so.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	unlock, err := filelock.Lock(ctx, f)
	if err != nil {
		return fmt.Errorf("--history: taking this run's record back from %s: lock: %w", file, err)
	}
	defer unlock()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("--history: taking this run's record back from %s: %w", file, err)
	}
	end := a.size + int64(len(a.line))
	got := make([]byte, len(a.line))
	if st.Size() != end {
		return fmt.Errorf("--history: %s keeps this run's record: another run appended to it since", file)
	}
	if _, err := f.ReadAt(got, a.size); err != nil || !bytes.Equal(got, a.line) {
		return fmt.Errorf("--history: %s keeps this run's record: it changed since", file)
	}
	if err := f.Truncate(a.size); err != nil {
		return fmt.Errorf("--history: taking this run's record back from %s: %w", file, err)
	}
	if len(a.tail) > 0 {
		if _, err := f.WriteAt(a.tail, a.size); err != nil {
			return fmt.Errorf("--history: putting the torn last line back in %s: %w", file, err)
		}
	}
	return nil
}

// lastLine returns the bytes after the last newline of f (size bytes) and their
// 1-based line number; nothing when f ends with a newline.
func lastLine(f *os.File, size int64) ([]byte, int, error) {
	var tail []byte
	buf := make([]byte, 64<<10)
	off := size
	for off > 0 {
		n := int64(len(buf))
		if n > off {
			n = off
		}
		off -= n
		if _, err := f.ReadAt(buf[:n], off); err != nil {
			return nil, 0, err
		}
		chunk := buf[:n]
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			tail = append(append([]byte{}, chunk[i+1:]...), tail...)
			off += int64(i) + 1
			break
		}
		tail = append(append([]byte{}, chunk...), tail...)
		if len(tail) > MaxRecord+1 {
			break // longer than any record: torn whatever its start
		}
	}
	if len(tail) == 0 {
		return nil, 0, nil
	}
	lines, err := countLines(f, off)
	return tail, lines + 1, err
}

// countLines counts the newlines in f's first n bytes.
func countLines(f *os.File, n int64) (int, error) {
	count := 0
	buf := make([]byte, 256<<10)
	for off := int64(0); off < n; {
		m := min(int64(len(buf)), n-off)
		if _, err := f.ReadAt(buf[:m], off); err != nil {
			return 0, err
		}
		count += bytes.Count(buf[:m], []byte{'\n'})
		off += m
	}
	return count, nil
}

// validLine reports whether b is one history record.
func validLine(b []byte) bool {
	check := jsonpos.Scanner{MaxValues: jsonpos.DocumentMaxValues}
	if check.Check(b) != nil {
		return false
	}
	v, err := fastjson.ParseBytes(b)
	if err != nil {
		return false
	}
	_, _, err = record(v)
	return err == nil
}

// Scan calls fn with every record of the history at path, in file order, and
// its parsed document (valid until fn returns; rec.Document is nil). Each line
// is parsed once; memory holds one line at a time; a UTF-8 BOM at the start of
// the file is dropped. A line that is not a record is an input error naming the
// file and line, except a torn last line (no newline at the end of the file,
// not a record: an interrupted write), which is skipped and reported to
// OnTorn. A record whose document holds a measure value of the wrong JSON
// type (checkMeasures) is an input error wherever it is, the last line
// included. The scan stops with ctx's error once ctx ends (a history of
// hundreds of megabytes takes seconds to read: SIGINT and SIGTERM were not
// heeded until it was done).
func Scan(ctx context.Context, path string, fn func(rec Record, doc *fastjson.Value) error, opts ...ScanOption) error {
	file := File(path)
	if err := regular(file); err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	return ScanReader(ctx, file, f, fn, opts...)
}

// ScanOption configures Scan and ScanReader.
type ScanOption func(*scanConfig)

type scanConfig struct{ torn func(file string, line int) }

// OnTorn calls fn for a torn last line that Scan skips.
func OnTorn(fn func(file string, line int)) ScanOption {
	return func(c *scanConfig) { c.torn = fn }
}

// TornWarning is the warning of a torn last line.
func TornWarning(file string, line int) string {
	return fmt.Sprintf("%s:%d: skipped a torn last line (no newline, not a record: an interrupted write); the next append drops it", file, line)
}

// ScanReader is Scan of r, named file in its messages.
func ScanReader(ctx context.Context, file string, r io.Reader, fn func(rec Record, doc *fastjson.Value) error, opts ...ScanOption) error {
	var cfg scanConfig
	for _, o := range opts {
		o(&cfg)
	}
	br := bufio.NewReaderSize(r, 1<<20)
	var p fastjson.Parser
	// The one JSON rule of the inputs (duplicate keys are errors), and the cap
	// on a record's values that bounds fastjson's tree.
	check := jsonpos.Scanner{MaxValues: jsonpos.DocumentMaxValues}
	line := 0
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		raw, rerr := readLine(br)
		if errors.Is(rerr, bufio.ErrTooLong) {
			return input.Errorf(file, line+1, "line longer than %d MiB", MaxRecord>>20)
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return input.Errorf(file, line+1, "%v", rerr)
		}
		if len(raw) == 0 && rerr != nil {
			return nil //nolint:nilerr // rerr is io.EOF: the end of the history
		}
		line++
		last := rerr != nil // io.EOF: the file does not end with a newline
		if line == 1 {
			raw = input.TrimBOM(raw) // as every reader drops it
		}
		b := bytes.TrimSpace(raw)
		if len(b) == 0 {
			continue
		}
		rec, doc, err := parseRecord(&check, &p, b)
		if err != nil {
			if last {
				if cfg.torn != nil {
					cfg.torn(file, line)
				}
				return nil
			}
			return input.Errorf(file, line, "%v", err)
		}
		// A whole record whose measures are mistyped is refused, also as the
		// last line: it is not torn, and skipping it would hide a run.
		if err := checkMeasures(doc); err != nil {
			return input.Errorf(file, line, "%v", err)
		}
		rec.Line = line
		if err := fn(rec, doc); err != nil {
			return err
		}
		if last {
			return nil //nolint:nilerr // rerr is io.EOF: the last line had no newline
		}
	}
}

// readLine reads one line (without its newline) of at most MaxRecord bytes;
// io.EOF with the bytes of a last line without newline.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxRecord+1 {
			return nil, bufio.ErrTooLong
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return buf, err
		}
	}
}

func parseRecord(check *jsonpos.Scanner, p *fastjson.Parser, b []byte) (Record, *fastjson.Value, error) {
	if err := check.Check(b); err != nil {
		return Record{}, nil, errors.New(jsonpos.Message(err, "not a history record: "))
	}
	v, err := p.ParseBytes(b)
	if err != nil {
		return Record{}, nil, fmt.Errorf("not a history record: %v", err) //nolint:errorlint // a message
	}
	return record(v)
}

// record checks one parsed line and returns its fields.
func record(v *fastjson.Value) (Record, *fastjson.Value, error) {
	var rec Record
	if v.Type() != fastjson.TypeObject {
		return rec, nil, errors.New("not a history record: not a JSON object")
	}
	str := func(key string, required bool) (string, error) {
		x := v.Get(key)
		if x == nil || x.Type() == fastjson.TypeNull {
			if required {
				return "", fmt.Errorf("record without %s", key)
			}
			return "", nil
		}
		b, err := x.StringBytes()
		if err != nil {
			return "", fmt.Errorf("%s is not a string", key)
		}
		return string(b), nil
	}
	var err error
	if rec.Schema, err = str("schema", true); err != nil {
		return rec, nil, err
	}
	if rec.Schema != Schema {
		return rec, nil, fmt.Errorf("schema %q, want %q", rec.Schema, Schema)
	}
	if rec.Command, err = str("command", true); err != nil {
		return rec, nil, err
	}
	if rec.Command == "" {
		return rec, nil, errors.New("record without a command")
	}
	if rec.Commit, err = str("commit", false); err != nil {
		return rec, nil, err
	}
	if rec.Branch, err = str("branch", false); err != nil {
		return rec, nil, err
	}
	if rec.Report, err = str("report", false); err != nil {
		return rec, nil, err
	}
	if rec.Report != "" && !ReportPath.MatchString(rec.Report) {
		return rec, nil, fmt.Errorf("report %s is not a path reports/NAME.html", quoted(rec.Report))
	}
	if rec.Time, err = str("time", true); err != nil {
		return rec, nil, err
	}
	if _, err := time.Parse(time.RFC3339, rec.Time); err != nil {
		return rec, nil, fmt.Errorf("time %s is not RFC 3339", quoted(rec.Time))
	}
	doc := v.Get("document")
	if doc == nil || doc.Type() != fastjson.TypeObject {
		return rec, nil, errors.New("record without a document object")
	}
	rec.Fingerprint = Fingerprint{Inputs: map[string]string{}, Params: map[string]string{}}
	if fp := v.Get("fingerprint"); fp != nil && fp.Type() != fastjson.TypeNull {
		if fp.Type() != fastjson.TypeObject {
			return rec, nil, errors.New("fingerprint is not an object")
		}
		if d := fp.Get("digest"); d != nil {
			b, err := d.StringBytes()
			if err != nil {
				return rec, nil, errors.New("fingerprint.digest is not a string")
			}
			rec.Fingerprint.Digest = string(b)
		}
		for _, m := range []struct {
			key string
			to  map[string]string
		}{{"inputs", rec.Fingerprint.Inputs}, {"params", rec.Fingerprint.Params}} {
			o := fp.Get(m.key)
			if o == nil || o.Type() == fastjson.TypeNull {
				continue
			}
			obj, err := o.Object()
			if err != nil {
				return rec, nil, fmt.Errorf("fingerprint.%s is not an object", m.key)
			}
			var verr error
			obj.Visit(func(k []byte, x *fastjson.Value) {
				b, err := x.StringBytes()
				if err != nil && verr == nil {
					verr = fmt.Errorf("fingerprint.%s[%s] is not a string", m.key, quoted(string(k)))
				}
				m.to[string(k)] = string(b)
			})
			if verr != nil {
				return rec, nil, verr
			}
		}
	}
	return rec, doc, nil
}

// quoted is a value of the history as an error message quotes it: Go-quoted
// (no control character gets through) and cut at 80 characters, so a huge
// value in a hostile or corrupt record does not become a huge message.
func quoted(s string) string {
	if r := []rune(s); len(r) > 80 {
		return strconv.Quote(string(r[:80])) + "…"
	}
	return strconv.Quote(s)
}
