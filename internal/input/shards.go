package input

import (
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
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		var files []string
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
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
	lines int   // the newlines read so far
	fresh bool  // the shard's first read
	err   error
}

// OpenSharded opens the shards of path (ExpandShards) as one reader: the
// shards one after another, a newline added after a shard whose last line
// has none, a UTF-8 byte order mark at a shard's start dropped. A shard with
// nothing but white space is an error, "SHARD: empty shard", when the read
// reaches it, and so is a gzip shard (a newline cannot be added to it). Name is the input's name in messages (path as given); Remap
// turns an error at a line of the stream into one at the shard's line.
func OpenSharded(ctx context.Context, path string) (*Sharded, error) {
	paths, err := ExpandShards(path)
	if err != nil {
		return nil, err
	}
	s := &Sharded{ctx: ctx, name: path, paths: paths}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// Paths is the shards in the order they are read.
func (s *Sharded) Paths() []string { return s.paths }

func (s *Sharded) open() error {
	f, err := Open(s.ctx, s.paths[s.i])
	if err != nil {
		return err
	}
	s.f, s.r, s.seen, s.last, s.fresh, s.pq = f, Reader(s.ctx, f), false, '\n', true, nil
	switch pq, err := openParquetFile(s.ctx, s.paths[s.i], f); {
	case err == nil: // a Parquet shard: its rows as lines
		s.pq, s.r, s.fresh = pq, pq, false
	case !errors.Is(err, errNotParquet):
		f.Close()
		s.f = nil
		return err
	}
	s.start = append(s.start, s.lines+1)
	return nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Read reads the shards in order.
func (s *Sharded) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	for len(p) > 0 {
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
	s.i, s.lines, s.start, s.err = 0, 0, s.start[:0], nil
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
	return s.paths[i], n - s.start[i] + 1
}

// firstLine is how the readers name the earlier line of a duplicate id.
var firstLine = regexp.MustCompile(`\(first (?:at|on) line ([1-9][0-9]*)\)`)

// Remap returns err with its input error at a line of the stream (an *Error
// naming Name) made one at the shard's line, and the earlier line a duplicate
// names ("(first at line N)") made the shard's ("(first at SHARD:LINE)" when
// it is another shard's). Any other error is returned as it is.
func (s *Sharded) Remap(err error) error {
	var ie *Error
	if err == nil || !errors.As(err, &ie) || ie.File != s.name || ie.Line <= 0 {
		return err
	}
	file, line := s.Locate(ie.Line)
	msg := firstLine.ReplaceAllStringFunc(ie.Msg, func(m string) string {
		n, aerr := strconv.Atoi(firstLine.FindStringSubmatch(m)[1])
		if aerr != nil {
			return m
		}
		ff, fl := s.Locate(n)
		if ff == file {
			return fmt.Sprintf("(first at line %d)", fl)
		}
		return fmt.Sprintf("(first at %s:%d)", ff, fl)
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
