package input

import "io"

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
