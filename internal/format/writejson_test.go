package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encoderJSON is what WriteJSON wrote before it indented as it writes:
// json.Encoder with SetIndent("", "  ") and HTML unescaped, one Write.
func encoderJSON(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(v))
	return buf.Bytes()
}

// smallWrites records every Write (WriteJSON writes at most 64 KiB at a
// time, and a string longer than that at once).
type smallWrites struct {
	bytes.Buffer
	n int
}

func (s *smallWrites) Write(p []byte) (int, error) { s.n++; return s.Buffer.Write(p) }

func TestWriteJSONAsEncoder(t *testing.T) {
	big := make([]any, 0, 20000)
	for i := range 20000 {
		big = append(big, map[string]any{"case_id": "case-" + strings.Repeat("x", i%7), "bins": []int{i, i + 1}, "empty": []int{}, "obj": map[string]int{}})
	}
	tests := []struct {
		name string
		v    any
	}{
		{"scalar", 1.5},
		{"string", "a \"quoted\" \\ string, with: punctuation {} [] <&>"},
		{"empty containers", map[string]any{"a": []int{}, "b": map[string]int{}, "c": nil, "d": [][]int{{}, {1}}}},
		{"nested", map[string]any{"x": []any{1, "two", map[string]any{"three": []any{true, false, nil}}}, "y": Float(math.NaN())}},
		{"escapes", []string{"\u2028\u2029", "\x00\x1f", "tab\there", "é ✓ \U0001F600", "\\\"\\"}},
		{"long string", strings.Repeat("ab\"c\\", 40000)},
		{"big", big},
		{"deep", func() any {
			var v any = 1
			for i := range 200 {
				if i%2 == 0 {
					v = []any{v, "s"}
				} else {
					v = map[string]any{"k": v, "e": []int{}}
				}
			}
			return v
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w smallWrites
			require.NoError(t, WriteJSON(&w, tt.v))
			want := encoderJSON(t, tt.v)
			require.Equal(t, string(want), w.String())
			assert.LessOrEqual(t, w.n, len(want)/(32<<10)+2, "writes of up to 64 KiB")
		})
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

// A value that cannot be marshalled writes nothing; a failing writer's error
// is returned.
func TestWriteJSONErrors(t *testing.T) {
	var w failWriter
	require.Error(t, WriteJSON(&w, map[string]any{"f": func() {}}))
	assert.Equal(t, 0, w.n)
	require.EqualError(t, WriteJSON(&w, []int{1, 2}), "disk full")
}

// FuzzWriteIndented: any compact JSON value followed by a newline (what
// json.Encoder writes) is indented exactly as json.Indent indents it.
func FuzzWriteIndented(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{"b":[]}],"c":"x,\"y\":{"}`, `"s"`, `[[[[]]],{}]`, `1e9`, `{"\\":"\\\\\""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, in))
		compact.WriteByte('\n')
		var want bytes.Buffer
		require.NoError(t, json.Indent(&want, compact.Bytes(), "", "  "))
		var got bytes.Buffer
		require.NoError(t, writeIndented(&got, compact.Bytes()))
		require.Equal(t, want.String(), got.String())
	})
}

// WriteJSON allocates about the compact document (json.Encoder's buffer),
// not an indented copy grown by appends: under twice the indented size for a
// 6 MB report (json.Encoder with SetIndent allocated over five times it).
func TestWriteJSONMemory(t *testing.T) {
	type row struct {
		CaseID   string `json:"case_id"`
		HumanBin int    `json:"human_bin"`
		JudgeBin int    `json:"judge_bin"`
	}
	rows := make([]row, 100000)
	for i := range rows {
		rows[i] = row{CaseID: "case-" + strings.Repeat("7", i%9), HumanBin: i % 3, JudgeBin: 2}
	}
	v := map[string]any{"dimensions": map[string]any{"d": map[string]any{"disagreements": rows}}}
	size := len(encoderJSON(t, v))
	if racetest.Enabled {
		// encoding/json's encode states come from a sync.Pool, whose Puts the
		// race detector drops at random: the count is not the program's there.
		t.Skip("allocation count under -race")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	require.NoError(t, WriteJSON(io.Discard, v))
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2*size), "bytes allocated for a %d-byte document", size)
}
