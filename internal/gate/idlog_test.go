package gate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzIDLog holds the duplicate-id log to a map on any ids (the lines of
// the input; empty ones and repeats included), at lines with gaps, with
// chunks small enough that most entries spill: the error names the
// earliest duplicate, its id and its first line, or there is none.
func FuzzIDLog(f *testing.F) {
	f.Add([]byte("a\nb\na\n"), uint8(0))
	f.Add([]byte("x\n\n\nx"), uint8(3))
	f.Add([]byte("case-1\ncase-2\ncase-3\ncase-2\ncase-1"), uint8(0x5a))
	f.Add([]byte(strings.Repeat("é\n", 40)), uint8(0xff))
	var many strings.Builder // enough for full chunks, spilled, in every partition
	for i := range 3000 {
		fmt.Fprintf(&many, "c%d\n", i)
	}
	many.WriteString("c5")
	f.Add([]byte(many.String()), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, shape uint8) {
		ids := strings.Split(string(data), "\n")
		if len(ids) > 4000 {
			ids = ids[:4000]
		}
		l := idLog{chunkN: 4 << (shape & 3), maxMemChunks: int(shape>>2) & 7}
		if l.maxMemChunks == 0 {
			l.maxMemChunks = 1
		}
		// The arena's mapped regions (3 MiB, populated) go back now, not at
		// a cleanup after the next collection: a fuzz worker runs thousands
		// of logs between collections.
		defer l.release()
		first := map[string]int{}
		want := ""
		line := 0
		for i, id := range ids {
			line += 1 + int(shape>>(i%8)&1) // gaps: blank lines
			if f, ok := first[id]; ok && want == "" {
				want = fmt.Sprintf("f:%d: duplicate case id %q (first at line %d)", line, id, f)
			} else if !ok {
				first[id] = line
			}
			require.NoError(t, l.add(idHash(id), uint32(line), id, "f"))
		}
		err := l.duplicate()
		if want == "" {
			require.NoError(t, err)
			return
		}
		require.EqualError(t, err, want)
	})
}
