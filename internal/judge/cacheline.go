package judge

import (
	"bufio"
	"errors"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// MaxCacheLine bounds one line of the judge cache: an entry is a key, a grade,
// a reason of at most 300 runes, a model name and a prompt hash, far below
// 1 MiB. A longer line is an input error, read no further than the cap (the
// reader held any line whole before, issue 20 item 4).
const MaxCacheLine = 1 << 20

// readCacheLine is bufio.Reader.ReadBytes('\n') with the line capped at
// MaxCacheLine: a longer line is an *input.Error at line n of file.
func readCacheLine(br *bufio.Reader, file string, n int) ([]byte, error) {
	var long []byte
	for {
		b, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) && long == nil {
			return append([]byte(nil), b...), err
		}
		long = append(long, b...)
		if len(long) > MaxCacheLine+1 {
			return nil, input.Errorf(file, n, "line longer than %d MiB: not a judge cache entry (delete the file to start afresh)", MaxCacheLine>>20)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return long, err
		}
	}
}
