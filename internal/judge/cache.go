package judge

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
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/retrieval-gate/retrieval-gate/internal/filelock"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// CacheKey addresses one judgment: the prompt's hash, the model, the query text,
// the SHA-256 of the document text and the repeat index. "judge-v2" is the
// message layout of Prompt.Messages (system instructions, tagged user data):
// a --prompt file's grades cached under v1's one user message are not reused.
func CacheKey(promptHash, model, query, document string, repeat int) string {
	dh := sha256.Sum256([]byte(document))
	h := sha256.New()
	for _, part := range []string{"retrieval-gate-judge-v2", promptHash, model, query, hex.EncodeToString(dh[:]), strconv.Itoa(repeat)} {
		_, _ = io.WriteString(h, part)
		_, _ = h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Entry is one cached judgment (one JSON line of the cache file).
type Entry struct {
	Key              string `json:"key"`
	Grade            int    `json:"grade"`
	Reason           string `json:"reason"`
	Model            string `json:"model"`
	PromptHash       string `json:"prompt_hash"`
	Repeat           int    `json:"repeat"`
	AnswerFormat     string `json:"answer_format"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
}

// CacheStore is the judgment cache a run reads and appends to, opened by the
// front end (OpenCache) and handed to Run: Get a judgment by its CacheKey, Put a
// new one (kept at once, so an interrupted run keeps what it paid for), Sync
// what was put to stable storage (before a batch's state file is removed), and
// the number of judgments Loaded when it was opened.
type CacheStore interface {
	Get(key string) (Entry, bool)
	Put(e Entry) error
	Sync() error
	Loaded() int
}

// Cache is an append-only JSONL file of valid judgments, keyed by CacheKey. Each
// judgment is appended as one line with one write as soon as it is Put (Judge
// puts them in the pool's order: cacheOrder), so an interrupted run keeps what
// it paid for; a torn last line (a crash mid-write)
// is dropped when the file is opened. Only valid grades are cached: an
// unparseable answer is asked again by the next run. Safe to keep in
// actions/cache (restore, run, save).
//
// Opening the cache writes nothing: a missing file (and its directory) is
// created, and a torn last line dropped, when the first judgment is appended,
// so a run refused for its inputs, or one that makes no judgment, leaves the
// cache as it was (or absent).
type Cache struct {
	path    string
	mu      sync.Mutex
	f       *os.File // the file as loaded (nil: missing, created by the first Put)
	entries map[string]Entry
	loaded  int
	// good is the length of the file's complete lines, and tail a complete
	// last entry without its newline: the repair the first Put makes.
	good int64
	tail []byte
	// ready: f is repaired and at its end, appended to by Put; closed: Close
	// was called (a later Put is kept in memory only).
	ready, closed bool
	// ctx is the run's (OpenCacheContext): the wait for the file's lock,
	// which another run sharing the cache holds while it appends, ends with it.
	ctx context.Context
}

// Missing reports that the cache's file did not exist when it was opened and
// has not been created since (no judgment was put): the caller checks that it
// can be created before the work (the CLI: atomicfile.Set.AddAppended).
func (c *Cache) Missing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.path != "" && c.f == nil && !c.closed
}

// MemoryCache is an empty in-memory cache that is not kept (a run given no
// cache): it opens no file.
func MemoryCache() *Cache { return &Cache{entries: map[string]Entry{}} }

// OpenCacheContext loads path (a missing file is an empty cache) for appending,
// writing nothing yet (the first Put creates the file and its directory, or
// drops a torn last line). An empty path is an in-memory cache that is not
// kept (MemoryCache).
// The loading ends with ctx.Err() soon after ctx ends: a cache kept from run
// to run grows, and a million entries take seconds to read.
func OpenCacheContext(ctx context.Context, path string) (*Cache, error) {
	if path == "" {
		return MemoryCache(), nil
	}
	c := &Cache{path: path, entries: map[string]Entry{}, ctx: ctx}
	if err := refuseSpecial(path, "the judge cache"); err != nil {
		return nil, err
	}
	// O_NONBLOCK: a path swapped for a named pipe after the check is not waited
	// on either; its kind is checked again on the open file. Read-write (an
	// unwritable cache fails here, before any judgment), never created here.
	// O_APPEND: every line goes to the file's end, also when another run
	// sharing the cache appended since (see appendable).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|syscall.O_NONBLOCK, 0)
	if missing(err) {
		return c, nil // created by the first Put (Missing), if it can be
	}
	if err != nil {
		return nil, fmt.Errorf("failed to open the judge cache: %w", err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, refuseSpecial(path, "the judge cache")
	}
	good, tail, err := c.load(ctx, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	c.f, c.good, c.tail = f, good, tail
	return c, nil
}

// appendable makes the file ready for Put's appends (c.mu held): a missing
// file is created with its directory. The file is opened O_APPEND and every
// append is made under the file's lock, after the repair of its last line
// (repair): another run sharing the cache may have appended since this one
// read it, and its lines stay (cutting the file back to the length read, as
// the first append did, lost them, and writing at this run's own offset
// overwrote them).
func (c *Cache) appendable() error {
	if c.f == nil {
		if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil { //nolint:gosec // G301: the cache's directory, 0755 like atomicfile's output directories
			return fmt.Errorf("failed to create the cache directory: %w", err)
		}
		f, err := os.OpenFile(c.path, os.O_RDWR|os.O_CREATE|os.O_APPEND|syscall.O_NONBLOCK, 0o644) //nolint:gosec // G302: grades, reasons and token counts (no key, no secret), shared with CI steps like the reports
		if err != nil {
			return fmt.Errorf("failed to create the judge cache: %w", err)
		}
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			f.Close()
			return refuseSpecial(c.path, "the judge cache")
		}
		c.f = f
	}
	c.ready = true
	return nil
}

// lock takes the cache file's lock, waiting for another run's append until
// the run's context ends.
func (c *Cache) lock() (func(), error) {
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	unlock, err := filelock.Lock(ctx, c.f)
	if err != nil {
		return nil, fmt.Errorf("failed to lock the judge cache %s: %w", c.path, err)
	}
	return unlock, nil
}

// repair ends the file's last line before an append (c.f locked): nothing to
// do when the file ends with a newline; a last line that is a complete entry
// (the one this run loaded as c.tail, or one another run left) gets its
// newline; any other, a torn write (a run killed mid-write), is cut off. The
// lines before it are complete (c.good of them were read; any after are
// appends made whole under the lock).
func (c *Cache) repair() error {
	st, err := c.f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size <= c.good {
		return nil
	}
	end := []byte{0}
	if _, err := c.f.ReadAt(end, size-1); err != nil {
		return err
	}
	if end[0] == '\n' {
		return nil
	}
	start, err := lastLineStart(c.f, c.good, size)
	if err != nil {
		return err
	}
	if size-start > MaxCacheLine {
		return c.f.Truncate(start) // longer than any entry: never read whole
	}
	last := make([]byte, size-start)
	if _, err := c.f.ReadAt(last, start); err != nil {
		return err
	}
	var e Entry
	if (start == c.good && c.tail != nil && bytes.Equal(last, c.tail)) ||
		(new(jsonpos.Scanner).Check(last) == nil && json.Unmarshal(last, &e) == nil && validEntry(e)) {
		_, err := c.f.Write([]byte{'\n'})
		return err
	}
	return c.f.Truncate(start)
}

// lastLineStart is the offset of the last line of f's first size bytes: just
// after the last newline at or past from, else from (a line start).
func lastLineStart(f *os.File, from, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > from; {
		n := min(int64(len(buf)), end-from)
		b := buf[:n]
		if _, err := f.ReadAt(b, end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
	}
	return from, nil
}

// refuseSpecial refuses a path that exists and is not a regular file (a named
// pipe, a device such as /dev/null, a directory, a socket), as an input error
// naming what it is: the cache is read whole, appended to and synced, and a
// named pipe was opened read-write and read without end (one SIGTERM did
// nothing, issue 33 item 6), /dev/null ended in "sync: invalid argument".
// A missing path is not refused (the cache is created).
func refuseSpecial(path, what string) error {
	st, err := os.Stat(path)
	if missing(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to open %s %s: %w", what, path, err)
	}
	if st.Mode().IsRegular() {
		return nil
	}
	return input.Errorf(path, 0, "%s must be a regular file, and this is %s: name a file (a new one is created)", what, fileKind(st.Mode()))
}

// missing reports whether err says a path does not exist: no file there, or
// a regular file where a directory of the path should be (ENOTDIR), which the
// caller's check of the new file's place words ("failed to create").
func missing(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// fileKind names the kind of a file that is not regular.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// load reads every entry of r into c and returns the offset after the last
// complete line, and a last line without newline that parses (to be ended with
// a newline before appending); a torn last line is left out. A UTF-8 BOM at
// the start of the file is read past (and counted in the offset). It ends with
// ctx.Err() soon after ctx ends (checked every 1,024 lines).
func (c *Cache) load(ctx context.Context, r io.Reader) (good int64, tail []byte, err error) {
	br := bufio.NewReaderSize(r, 1<<20)
	// Every line passes jsonpos first (the one JSON rule of the inputs): a
	// repeated key is an error, where encoding/json lets the last one win.
	var check jsonpos.Scanner
	line := 0
	for {
		b, err := readCacheLine(br, c.path, line+1)
		if line == 0 && bytes.HasPrefix(b, input.BOM) {
			// A BOM at the start of the file is dropped, as every reader
			// does, and kept in the file: appends and the repair of the
			// last line start after it.
			good += int64(len(input.BOM))
			b = b[len(input.BOM):]
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			cerr := check.Check(b)
			if se, ok := cerr.(*jsonpos.SyntaxError); ok && se.NotSyntax() { //nolint:errorlint // Check returns *SyntaxError only
				return 0, nil, input.Errorf(c.path, line+1, "%s", se.Describe())
			}
			var e Entry
			if cerr == nil {
				// Complete JSON is not a torn write (a cut object lacks its
				// closing brace): an entry, or refused as with its newline.
				if json.Unmarshal(b, &e) != nil || !validEntry(e) {
					return 0, nil, input.Errorf(c.path, line+1, "not a judge cache entry (delete the file to start afresh)")
				}
				c.entries[e.Key] = e
				c.loaded++
				return good, b, nil
			}
			// A torn write is dropped only from a file that is recognisably a
			// judge cache: entries before it, or the start of one of ours. Any
			// other file is refused, never truncated (issue 20 item 3).
			if c.loaded == 0 && !bytes.HasPrefix(b, []byte(entryStart)) {
				return 0, nil, input.Errorf(c.path, line+1, "not a judge cache entry, and the file holds none: refusing to use it as the cache (name a new file, or delete this one to start afresh)")
			}
			return good, nil, nil
		}
		if errors.Is(err, io.EOF) {
			return good, nil, nil
		}
		if err != nil {
			var ie *input.Error
			if errors.As(err, &ie) {
				return 0, nil, err
			}
			return 0, nil, fmt.Errorf("failed to read the judge cache %s: %w", c.path, err)
		}
		line++
		if line&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, nil, err
			}
		}
		good += int64(len(b))
		t := bytes.TrimSpace(b)
		if len(t) == 0 {
			continue
		}
		if err := check.Check(t); err != nil {
			if se, ok := err.(*jsonpos.SyntaxError); ok && se.NotSyntax() { //nolint:errorlint // Check returns *SyntaxError only
				return 0, nil, input.Errorf(c.path, line, "%s", se.Describe())
			}
			return 0, nil, input.Errorf(c.path, line, "not a judge cache entry (delete the file to start afresh)")
		}
		var e Entry
		if err := json.Unmarshal(t, &e); err != nil || !validEntry(e) {
			return 0, nil, input.Errorf(c.path, line, "not a judge cache entry (delete the file to start afresh)")
		}
		c.entries[e.Key] = e
		c.loaded++
	}
}

// entryStart begins every line the cache writes (Entry's first field).
const entryStart = `{"key":"`

func validEntry(e Entry) bool {
	return e.Key != "" && e.Grade >= 0 && e.Grade <= MaxGrade
}

// Loaded is the number of entries read from the file.
func (c *Cache) Loaded() int { return c.loaded }

// Get returns the entry of key.
func (c *Cache) Get(key string) (Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	return e, ok
}

// Put records e and appends it to the file.
func (c *Cache) Put(e Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[e.Key] = e
	if c.path == "" || c.closed {
		return nil
	}
	if !c.ready {
		if err := c.appendable(); err != nil {
			return err
		}
	}
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := c.repair(); err != nil {
		return fmt.Errorf("failed to repair the judge cache %s: %w", c.path, err)
	}
	c.tail = nil
	if _, err := c.f.Write(line); err != nil {
		return fmt.Errorf("failed to append to the judge cache %s: %w", c.path, err)
	}
	return nil
}

// Sync flushes the appended entries to stable storage.
func (c *Cache) Sync() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ready || c.f == nil {
		return nil
	}
	return c.f.Sync()
}

// Close syncs and closes the file.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.f == nil {
		return nil
	}
	var err error
	if c.ready {
		err = c.f.Sync()
	}
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	c.f = nil
	return err
}
