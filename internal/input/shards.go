package input

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
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
)

// Shards (issue 35 item 3): an input that a cluster job wrote as shards (the
// part files of Spark, Ray Data, Dask or a BigQuery export) is given as a
// directory or a glob pattern, and read as one file: its shards in a stable
// order (sorted by path, bytewise), each ending a line, so every reader of a
// JSONL or TREC file reads them unchanged; the errors it returns name the
// shard and the line there (Remap), a duplicate id across two shards included.

// IsPattern reports whether path is a glob pattern (it holds *, ? or [) that
// names no existing file: a file whose name holds those characters is read
// as the file.
func IsPattern(path string) bool {
	if !strings.ContainsAny(path, "*?[") {
		return false
	}
	_, err := os.Stat(path)
	return err != nil
}

// ExpandShards returns the shards path names: a glob pattern's regular files
// (filepath.Match's syntax), or a directory's regular files at any depth (a
// Hive-partitioned output, locale=en/part-0.parquet, included), sorted by
// path; names starting with "." or "_" are skipped in a directory (Spark's
// _SUCCESS and .crc files, a writer's temporary files) and by a pattern unless
// it spells them. Any other path is itself (not checked). No match is an
// error naming the path.
func ExpandShards(path string) ([]string, error) {
	return ExpandShardsContext(context.Background(), path)
}

// ExpandShardsContext is ExpandShards that ends with ctx.Err() soon after ctx
// ends: a directory of a partitioned dataset may hold a million files, whose
// walk takes seconds.
func ExpandShardsContext(ctx context.Context, path string) ([]string, error) {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		var files []string
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if p != path && hiddenShard(d.Name()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, Errorf(path, 0, "no shards: the directory holds no files (names starting with . or _ are skipped)")
		}
		slices.Sort(files)
		return files, nil
	case err != nil && IsPattern(path):
		m, err := filepath.Glob(path)
		if err != nil {
			return nil, Errorf(path, 0, "not a valid pattern: %v", err)
		}
		files := m[:0]
		for _, p := range m {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if hiddenShard(filepath.Base(p)) && !hiddenShard(filepath.Base(path)) {
				continue
			}
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				files = append(files, p)
			}
		}
		if len(files) == 0 {
			return nil, Errorf(path, 0, "no shards: the pattern matches no file")
		}
		slices.Sort(files)
		return files, nil
	}
	return []string{path}, nil
}

func hiddenShard(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// IsSharded reports whether path is read as shards: a directory or a glob
// pattern, or a Parquet file (IsParquet), read as the one shard.
func IsSharded(path string) bool {
	if st, err := os.Stat(path); err == nil {
		return st.IsDir() || st.Mode().IsRegular() && IsParquet(path)
	}
	return IsPattern(path)
}

// Sharded is the shards of one input read as one stream (OpenSharded).
type Sharded struct {
	ctx   context.Context
	name  string
	paths []string
	i     int           // the shard being read
	f     *os.File      // its file; nil before it is opened
	pq    *parquetLines // its rows as lines when it is a Parquet file
	r     io.Reader
	seen  bool  // the current shard had a byte other than white space
	last  byte  // the last byte the current shard gave
	start []int // the line of the stream each shard's first line is (1-based)
	skip  []int // the lines of each shard dropped before its first line in the stream (a repeated CSV header)
	lines int   // the newlines read so far
	fresh bool  // the shard's first read
	err   error

	// A CSV sheet's shards (OpenShardedCSV): each carries the header line,
	// which must equal the first shard's and is dropped from every later one.
	header  bool   // the input may be a CSV with a header in every shard (OpenShardedCSV)
	csv     bool   // it is: the first shard's first line is not a JSON object
	hdr     []byte // the first shard's header line, its line ending dropped
	hdrLine int    // its line there
	pre     []byte // bytes read ahead at a shard's start, given before the rest
}

// OpenSharded opens the shards of path (ExpandShards) as one reader: the
// shards one after another, a newline added after a shard whose last line
// has none, a UTF-8 byte order mark at a shard's start dropped. A shard with
// nothing but white space is an error, "SHARD: empty shard", when the read
// reaches it, and so is a gzip shard (a newline cannot be added to it). Name is the input's name in messages (path as given); Remap
// turns an error at a line of the stream into one at the shard's line.
func OpenSharded(ctx context.Context, path string) (*Sharded, error) {
	paths, err := ExpandShardsContext(ctx, path)
	if err != nil {
		return nil, err
	}
	s := &Sharded{ctx: ctx, name: path, paths: paths}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenShardedCSV is OpenSharded for an input that is a CSV with a header line
// or JSONL, told apart as its reader does by the first shard's first
// non-blank line (a JSON object: JSONL, read as OpenSharded reads it). A CSV's
// every shard carries the header (as a CSV writer writes each part file):
// each must equal the first shard's ("SHARD:LINE: header differs from
// FIRST:LINE"), and a later shard's is dropped from the stream, its lines still
// counted in its shard (Locate); a shard with a header and no record is an
// empty shard, and so is the first, whose header stays in the stream. A
// Parquet shard (its rows JSON lines) is refused among CSV shards.
func OpenShardedCSV(ctx context.Context, path string) (*Sharded, error) {
	paths, err := ExpandShardsContext(ctx, path)
	if err != nil {
		return nil, err
	}
	s := &Sharded{ctx: ctx, name: path, paths: paths, header: true}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// maxHeader caps a CSV shard's header line (and the blank lines before it).
const maxHeader = 1 << 20

// Paths is the shards in the order they are read.
func (s *Sharded) Paths() []string { return s.paths }

func (s *Sharded) open() error {
	f, err := Open(s.ctx, s.paths[s.i])
	if err != nil {
		return err
	}
	s.f, s.r, s.seen, s.last, s.fresh, s.pq = f, Reader(s.ctx, f), false, '\n', true, nil
	skip := 0
	switch pq, err := openParquetFile(s.ctx, s.paths[s.i], f); {
	case err == nil: // a Parquet shard: its rows as lines
		s.pq, s.r, s.fresh = pq, pq, false
		if s.csv {
			s.Close()
			return Errorf(s.paths[s.i], 0, "a Parquet shard among CSV shards (%s is a CSV): write every shard in one format", s.paths[0])
		}
	case !errors.Is(err, errNotParquet):
		f.Close()
		s.f = nil
		return err
	case s.header && (s.i == 0 || s.csv):
		if skip, err = s.readHeader(); err != nil {
			s.Close()
			return err
		}
	}
	s.start = append(s.start, s.lines+1)
	s.skip = append(s.skip, skip)
	return nil
}

// readHeader reads a shard's first non-blank line (OpenShardedCSV), a gzip
// shard refused and a byte order mark dropped first. The first shard's decides
// whether the input is a CSV and is given on in the stream, as read (but not as
// a record: a shard of a header alone is empty); a later shard's is checked
// against it and dropped, and skip is the lines dropped.
func (s *Sharded) readHeader() (skip int, err error) {
	path := s.paths[s.i]
	br := bufio.NewReaderSize(s.r, 64<<10)
	s.r, s.fresh = br, false
	if b, _ := br.Peek(2); len(b) == 2 && b[0] == 0x1f && b[1] == 0x8b {
		return 0, Errorf(path, 0, "a gzip file: shards are read as text; write them uncompressed (or give one file)")
	}
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	var read []byte // the bytes read: the blank lines and the header line
	var line []byte // the header line, its line ending dropped
	n, lineStart := 0, 0
	for {
		b, err := br.ReadSlice('\n')
		read = append(read, b...)
		if len(read) > maxHeader {
			return 0, Errorf(path, n+1, "a header line longer than %d MiB", maxHeader>>20)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the line goes on
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		l := read[lineStart:]
		if len(l) > 0 {
			n++
		}
		if len(bytes.TrimSpace(l)) > 0 || err != nil {
			line = bytes.TrimRight(l, "\r\n")
			break
		}
		lineStart = len(read)
	}
	if s.i == 0 {
		s.pre = read
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '{' {
			s.csv, s.hdr, s.hdrLine = true, bytes.Clone(line), n
		} else {
			s.seen = len(t) > 0 // JSONL: the line is a record
		}
		return 0, nil
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return n, nil // no bytes but white space: an empty shard
	}
	if !bytes.Equal(line, s.hdr) {
		return 0, Errorf(path, n, "header differs from %s:%d", s.paths[0], s.hdrLine)
	}
	return n, nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Read reads the shards in order.
func (s *Sharded) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	for len(p) > 0 {
		if len(s.pre) > 0 { // the first shard's header (and any blank lines before it)
			n := copy(p, s.pre)
			s.pre = s.pre[n:]
			s.last = p[n-1]
			s.lines += bytes.Count(p[:n], []byte{'\n'})
			return n, nil
		}
		n, err := s.r.Read(p)
		if s.fresh && n > 0 {
			s.fresh = false
			if n >= 2 && p[0] == 0x1f && p[1] == 0x8b {
				s.err = Errorf(s.paths[s.i], 0, "a gzip file: shards are read as text; write them uncompressed (or give one file)")
				return 0, s.err
			}
			if n >= len(utf8BOM) && bytes.HasPrefix(p[:n], utf8BOM) {
				copy(p, p[len(utf8BOM):n])
				n -= len(utf8BOM)
			}
		}
		if n > 0 {
			if !s.seen && len(bytes.TrimSpace(p[:n])) > 0 {
				s.seen = true
			}
			s.last = p[n-1]
			s.lines += bytes.Count(p[:n], []byte{'\n'})
			return n, nil
		}
		if err == nil {
			continue
		}
		if err != io.EOF {
			s.err = err
			return 0, err
		}
		// The shard ended.
		if !s.seen {
			s.err = s.EmptyShard(s.i)
			return 0, s.err
		}
		if s.last != '\n' {
			s.last = '\n'
			s.lines++
			p[0] = '\n'
			return 1, nil
		}
		if cerr := s.Close(); cerr != nil {
			s.err = cerr
			return 0, cerr
		}
		if s.i+1 == len(s.paths) {
			s.err = io.EOF
			return 0, io.EOF
		}
		s.i++
		if err := s.open(); err != nil {
			s.err = err
			return 0, err
		}
	}
	return 0, nil
}

// Seek rewinds the stream to its start (offset 0 from io.SeekStart, the only
// seek it takes): the shards are read again from the first.
func (s *Sharded) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekStart {
		return 0, fmt.Errorf("%s: shards can only be read again from the start", s.name)
	}
	if err := s.Close(); err != nil {
		return 0, err
	}
	s.i, s.lines, s.start, s.skip, s.err = 0, 0, s.start[:0], s.skip[:0], nil
	s.csv, s.hdr, s.pre = false, nil, nil
	return 0, s.open()
}

// Close closes the shard being read.
func (s *Sharded) Close() error {
	if s.f == nil {
		return nil
	}
	var perr error
	if s.pq != nil {
		perr = s.pq.Close()
		s.pq = nil
	}
	err := s.f.Close()
	s.f = nil
	return cmp.Or(err, perr)
}

// Locate is the shard and its line of line n of the stream (1-based), once
// the read has passed the shard's start.
func (s *Sharded) Locate(n int) (string, int) {
	i, found := slices.BinarySearch(s.start, n)
	if !found {
		i--
	}
	if i < 0 {
		return s.name, n
	}
	return s.paths[i], n - s.start[i] + 1 + s.skip[i]
}

// lineRef is how the readers name another line of the input in a message:
// the earlier line of a duplicate ("(first at line N)", "(first on line N)")
// or any other ("has a grade on line N", "is on line N").
var lineRef = regexp.MustCompile(`\(first (?:at|on) line ([1-9][0-9]*)\)|\b(at|on) line ([1-9][0-9]*)\b`)

// Remap returns err with its input error at a line of the stream (an *Error
// naming Name) made one at the shard's line, and the other lines its message
// names made the shard's: "(first at line N)" in the same shard, "(first at
// SHARD:LINE)" in another, and so "on line N" or "at SHARD:LINE". Any other
// error is returned as it is.
func (s *Sharded) Remap(err error) error {
	var ie *Error
	if err == nil || !errors.As(err, &ie) || ie.File != s.name || ie.Line <= 0 {
		return err
	}
	file, line := s.Locate(ie.Line)
	msg := lineRef.ReplaceAllStringFunc(ie.Msg, func(m string) string {
		sm := lineRef.FindStringSubmatch(m)
		first, word, num := sm[1] != "", sm[2], sm[1]+sm[3]
		n, aerr := strconv.Atoi(num)
		if aerr != nil {
			return m
		}
		ff, fl := s.Locate(n)
		switch {
		case first && ff == file:
			return fmt.Sprintf("(first at line %d)", fl)
		case first:
			return fmt.Sprintf("(first at %s:%d)", ff, fl)
		case ff == file:
			return fmt.Sprintf("%s line %d", word, fl)
		}
		return fmt.Sprintf("at %s:%d", ff, fl)
	})
	re := &Error{File: file, Line: line, Msg: msg}
	if e, ok := err.(*Error); ok && e == ie { //nolint:errorlint // the error itself, not one it wraps
		return re
	}
	return &remapped{msg: strings.Replace(err.Error(), ie.Error(), re.Error(), 1), err: re}
}

// remapped is a wrapped input error with its place remapped.
type remapped struct {
	msg string
	err *Error
}

func (r *remapped) Error() string { return r.msg }
func (r *remapped) Unwrap() error { return r.err }
