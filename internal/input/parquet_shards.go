package input

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"

	"github.com/parquet-go/parquet-go"

	rgformat "github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// The cases' fast path over Parquet shards (casefile reads the rows itself,
// ParquetRows, instead of the lines of the text path).

// EmptyShard is the error of shard i when it holds no record.
func (s *Sharded) EmptyShard(i int) error {
	return Errorf(s.paths[i], 0, "empty shard: no records (every shard of %s must hold at least one line)", s.name)
}

// ParquetShards returns the paths of the stream's shards when every one is
// a Parquet file and nothing was read since the stream's start (or since a
// Seek to it); nil otherwise. A caller that reads them itself calls
// ReadParquetShards once it has.
func (s *Sharded) ParquetShards() []string {
	if s.i != 0 || s.pq == nil || s.seen || s.lines != 0 || s.err != nil {
		return nil
	}
	for _, p := range s.paths[1:] {
		if !IsParquet(p) {
			return nil
		}
	}
	return s.paths
}

// ReadParquetShards ends the stream's own reading of the shards, which the
// caller read itself: starts[i] is the line of the stream (1-based) that
// shard i's first row was, so that Locate and Remap name the shards. A later
// Read returns io.EOF.
func (s *Sharded) ReadParquetShards(starts []int) error {
	err := s.Close()
	s.start = append(s.start[:0], starts...)
	s.skip = append(s.skip[:0], make([]int, len(starts))...) // a Parquet shard has no header line
	s.i = len(s.paths) - 1
	s.err = io.EOF
	return err
}

// ShardRows opens shard i for reading by rows (OpenParquetRows); the rows'
// Close closes its file. The shard the stream has open, when nothing of it
// was read, is read from the stream's file, opened and checked once (a
// file's page headers are each a read): the stream closes it.
func (s *Sharded) ShardRows(i int) (*ParquetRows, error) {
	if i == s.i && s.pq != nil && !s.seen && s.lines == 0 && s.err == nil {
		return newParquetRows(s.pq), nil
	}
	f, err := Open(s.ctx, s.paths[i])
	if err != nil {
		return nil, err
	}
	r, err := OpenParquetRows(s.ctx, s.paths[i], f)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// ParquetLineAt returns, when every shard is a regular Parquet file and
// nothing of the stream was read (ParquetShards), a function giving the text
// line (the text path's, without its newline) of the row at line n of the
// stream (from 1, the rows of the shards one after another, as the fast path
// and the text path both number them), read again from its shard; nil
// otherwise. Only what locates the row is read: the footers of the shards up
// to its own, and in its own the row group holding it, from its start up to
// the row (the pages are not indexed). A line past the last row gives nil and
// no error. For a caller that names a row it read once by its line
// (check's duplicate case id) without keeping what it read.
func (s *Sharded) ParquetLineAt() func(n int) ([]byte, error) {
	paths := s.ParquetShards()
	if paths == nil {
		return nil
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return nil
		}
	}
	paths, ctx := slices.Clone(paths), s.ctx
	return func(n int) ([]byte, error) {
		row := int64(n) - 1 // in the shard being looked at, from 0
		for _, p := range paths {
			if row < 0 {
				return nil, nil
			}
			line, rows, err := parquetRowLine(ctx, p, row)
			if err != nil || line != nil {
				return line, err
			}
			row -= rows
		}
		return nil, nil
	}
}

// parquetRowLine opens the Parquet file path (checked as the text path
// checks it) and returns the line of its row (from 0), nil past its last, and
// its rows.
func parquetRowLine(ctx context.Context, path string, row int64) (line []byte, rows int64, err error) {
	f, err := Open(ctx, path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	p, err := openParquet(ctx, path, f, st.Size())
	if err != nil {
		return nil, 0, err
	}
	rows = p.f.NumRows()
	if row >= rows {
		return nil, rows, nil
	}
	line, err = p.rowLine(row)
	return line, rows, err
}

// rowLine reads row (from 0) of p's file, seeking to it in the row group
// holding it, and makes its line.
func (p *parquetLines) rowLine(row int64) (line []byte, err error) {
	p.row = row + 1 // the line's, in messages
	defer func() {
		if r := recover(); r != nil { // the library's panics on a damaged page
			line, err = nil, Errorf(p.name, int(p.row), "not a valid Parquet file: %v", r)
		}
	}()
	in := row
	for g, rg := range p.f.RowGroups() {
		if in >= rg.NumRows() {
			in -= rg.NumRows()
			continue
		}
		rs := rg.Rows()
		defer rs.Close()
		if err := rs.SeekToRow(in); err != nil {
			return nil, Errorf(p.name, int(p.row), "not a valid Parquet file: row group %d: %v", g, err)
		}
		buf := make([]parquet.Row, 1)
		n, err := rs.ReadRows(buf)
		if n == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				err = errors.New("no row")
			}
			return nil, Errorf(p.name, int(p.row), "not a valid Parquet file: row group %d: %v", g, err)
		}
		if len(buf[0]) > jsonpos.MaxValues {
			return nil, Errorf(p.name, int(p.row), "the row holds %s values, more than %s (the cap on what a record may take in memory)", rgformat.Thousands(len(buf[0])), rgformat.Thousands(jsonpos.MaxValues))
		}
		if p.trec {
			return p.trecLine(nil, buf[0])
		}
		return p.jsonLine(nil, buf[0])
	}
	return nil, nil
}
