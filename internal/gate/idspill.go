package gate

import (
	"fmt"
	"io"
	"os"
	"unsafe"
)

// idSpill is the id log's temporary file, created in the system's temporary
// directory on the first write and removed at once (the open file is the
// log's alone, as the baseline's is), so no exit path leaves it behind,
// SIGINT and SIGTERM included: the system frees its space once the file is
// closed, when the log is collected or the process exits.
type idSpill struct {
	f   *os.File
	off int64
}

// write appends the parts to the file and returns the offset of the first.
func (s *idSpill) write(parts ...[]byte) (int64, error) {
	if s.f == nil {
		if err := s.create(); err != nil {
			return 0, err
		}
	}
	at := s.off
	for _, p := range parts {
		n, err := s.f.WriteAt(p, s.off)
		s.off += int64(n)
		if err != nil {
			return 0, fmt.Errorf("case ids: failed to write the temporary file: %w", err)
		}
	}
	return at, nil
}

func (s *idSpill) create() error {
	f, err := os.CreateTemp("", "retrieval-gate-ids-*")
	if err != nil {
		return fmt.Errorf("case ids: %w", err)
	}
	s.f = f
	_ = os.Remove(f.Name()) // unlinked at once: see idSpill
	return nil
}

// read fills the parts from the file, starting at off.
func (s *idSpill) read(off int64, parts ...[]byte) error {
	for _, p := range parts {
		n, err := s.f.ReadAt(p, off)
		if err == io.EOF && n == len(p) {
			err = nil
		}
		if err != nil {
			return fmt.Errorf("case ids: failed to read the temporary file: %w", err)
		}
		off += int64(n)
	}
	return nil
}

// u64Bytes and u32Bytes view a slice's elements as bytes (in the machine's
// order: the file is read back by the process that wrote it).
func u64Bytes(s []uint64) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 8*len(s)) //nolint:gosec // G103: pointer-free integers viewed as their bytes
}

func u32Bytes(s []uint32) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s)) //nolint:gosec // G103: pointer-free integers viewed as their bytes
}
