package gate

import (
	"errors"
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
	var many strings.Builder // enough for full chunks, spilled, in every partition, and a flush of the staged cases before the end
	for i := range idStage + 1000 {
		fmt.Fprintf(&many, "c%d\n", i)
	}
	many.WriteString("c5")
	f.Add([]byte(many.String()), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, shape uint8) {
		ids := strings.Split(string(data), "\n")
		if len(ids) > 2*idStage {
			ids = ids[:2*idStage]
		}
		l := idLog{chunkN: 4 << (shape & 3), maxMemChunks: int(shape>>2) & 7}
		if l.maxMemChunks == 0 {
			l.maxMemChunks = 1
		}
		// The arena's mapped regions (3 MiB, populated) go back now, not at
		// a cleanup after the next collection: a fuzz worker runs thousands
		// of logs between collections.
		defer l.release()
		// The same log with no id store: a duplicate's id read again by
		// its line (Accumulator.IDsFrom, check's path for a regular file).
		byLine := map[int]string{}
		again := idLog{chunkN: l.chunkN, maxMemChunks: l.maxMemChunks, idAt: func(line int) (string, error) { return byLine[line], nil }}
		defer again.release()
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
			byLine[line] = id
			require.NoError(t, again.add(idHash(id), uint32(line), id, "f"))
		}
		require.Zero(t, again.ids.n, "no id kept")
		err, errAgain := l.duplicate(), again.duplicate()
		if want == "" {
			require.NoError(t, err)
			require.NoError(t, errAgain)
			return
		}
		require.EqualError(t, err, want)
		require.EqualError(t, errAgain, want)
	})
}

// TestIDsFrom: an accumulator that keeps no ids names a duplicate by the id
// read again at its line; an id read again that is not the one hashed (the
// file changed) is an error at that line, not a wrong id; the reader's error
// is returned as it is.
func TestIDsFrom(t *testing.T) {
	ids := map[int]string{1: "a", 2: "b", 4: "a"}
	readErr := errors.New("read failed")
	tests := map[string]struct {
		idAt func(line int) (string, error)
		want string
	}{
		"the id read again": {func(line int) (string, error) { return ids[line], nil },
			`cases.jsonl:4: duplicate case id "a" (first at line 1)`},
		"the file changed": {func(line int) (string, error) { return "z", nil },
			`cases.jsonl:4: the cases file changed while it was read (a duplicate case id was here, first at line 1)`},
		"the line is gone": {func(line int) (string, error) { return "", nil },
			`cases.jsonl:4: the cases file changed while it was read (a duplicate case id was here, first at line 1)`},
		"a failed read": {func(line int) (string, error) { return "", readErr }, readErr.Error()},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			a := NewAccumulator()
			defer a.Close()
			a.IDsFrom(tt.idAt)
			for _, line := range []int{1, 2, 4} {
				require.NoError(t, a.Add(&CaseResult{File: "cases.jsonl", Line: line, ID: ids[line], Type: "golden", Locale: "en"}))
			}
			require.Zero(t, a.seen.ids.n, "no id kept")
			require.EqualError(t, a.Duplicate(), tt.want)
		})
	}
}

// TestIDLogFlushFails: a failed write of the spill file while the staged
// cases move to their partitions loses none of them and appends none twice:
// once the file can be written, the same adds (the failed one again) find
// the same earliest duplicate, and none where there is none.
func TestIDLogFlushFails(t *testing.T) {
	for _, dup := range []bool{true, false} {
		t.Run(fmt.Sprint("duplicate ", dup), func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp+"/missing") // no spill file can be created
			l := idLog{chunkN: 4, maxMemChunks: 1}
			defer l.release()
			n, failed := 2*idStage, 0 // past a flush of the staged cases
			for i := 0; i < n; i++ {
				id := fmt.Sprintf("c%d", i)
				if dup && i == n-1 {
					id = "c5"
				}
				if err := l.add(idHash(id), uint32(i+1), id, "f"); err != nil {
					require.ErrorContains(t, err, "case ids:")
					failed++
					t.Setenv("TMPDIR", tmp)
					i-- // added again
				}
			}
			require.Equal(t, 1, failed, "the first flush past the memory spills")
			err := l.duplicate()
			if dup {
				require.EqualError(t, err, fmt.Sprintf("f:%d: duplicate case id \"c5\" (first at line 6)", n))
				return
			}
			require.NoError(t, err)
		})
	}
}
