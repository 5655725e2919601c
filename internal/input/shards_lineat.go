package input

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// TextLineAt returns, when every shard is a regular file and the shards are
// read as lines (not Parquet shards read by rows: ParquetLineAt; not a CSV
// sheet's shards, OpenShardedCSV), a function giving line n of the stream
// (from 1), without its line ending, read again from its shard; nil
// otherwise. The line is the stream's: its shard and its line there are
// Locate's (so only a line the read has passed is found), a byte order mark
// on a shard's first line and a "\r" before its newline dropped, a Parquet
// shard among text shards read by its row (ParquetLineAt's way). A line
// before the first or past its shard's last gives nil and no error. For a
// caller that names a line it read once (check's duplicate case id) without
// keeping what it read; a line is held up to limit bytes (ReadLineAt).
func (s *Sharded) TextLineAt(limit int) func(n int) ([]byte, error) {
	if s.header || s.ParquetShards() != nil {
		return nil
	}
	for _, p := range s.paths {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return nil
		}
	}
	return func(n int) ([]byte, error) {
		if n < 1 || len(s.start) == 0 {
			return nil, nil
		}
		path, line := s.Locate(n)
		if IsParquet(path) {
			b, _, err := parquetRowLine(s.ctx, path, int64(line)-1)
			return b, err
		}
		f, err := Open(s.ctx, path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return ReadLineAt(Reader(s.ctx, f), line, limit)
	}
}

// ReadLineAt reads line n (from 1) of r from r's start, without its line
// ending: "\n" and a "\r" before it, and on line 1 a UTF-8 byte order mark
// dropped; nil and no error when r ends before it. The lines before it are
// skipped, however long, not kept. Line n is held up to limit bytes: a longer
// one is an error, not read on (the caller's stream refused such a line, so
// the input changed since it was read).
func ReadLineAt(r io.Reader, n, limit int) ([]byte, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	for range n - 1 {
		for {
			_, err := br.ReadSlice('\n')
			if err == nil {
				break
			}
			if errors.Is(err, io.EOF) {
				return nil, nil
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return nil, err
			}
		}
	}
	var b []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(b)+len(frag) > limit+len(utf8BOM)+2 { // room for a BOM and "\r\n"
			return nil, fmt.Errorf("line %d is longer than %d bytes: the input changed since it was read", n, limit)
		}
		b = append(b, frag...)
		if err == nil || errors.Is(err, io.EOF) {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
	if len(b) == 0 {
		return nil, nil
	}
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if n == 1 {
		b = bytes.TrimPrefix(b, utf8BOM)
	}
	if len(b) > limit {
		return nil, fmt.Errorf("line %d is longer than %d bytes: the input changed since it was read", n, limit)
	}
	return b, nil
}
