package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
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

// rows is a JSONStreamer: its rows in chunks of three, as a test of the walk
// (MarshalJSON: the same bytes whole, what encoderJSON calls).
type rows []streamRow

type streamRow struct {
	ID   string `json:"id"`
	Bins []int  `json:"bins"`
}

func (r rows) StreamJSON(w io.Writer) error {
	if _, err := io.WriteString(w, "["); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := 0; i < len(r); i += 3 {
		buf.Reset()
		if err := enc.Encode([]streamRow(r[i:min(i+3, len(r))])); err != nil {
			return err
		}
		b := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
		if i > 0 {
			if _, err := io.WriteString(w, ","); err != nil {
				return err
			}
		}
		if _, err := w.Write(b[1 : len(b)-1]); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "]")
	return err
}

func (r rows) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	err := r.StreamJSON(&b)
	return b.Bytes(), err
}

// ptrMarshaler marshals only through a pointer receiver, as encoding/json
// calls it on an addressable value.
type ptrMarshaler struct{}

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) { return []byte(`{"by":"pointer"}`), nil }

type inner struct {
	Rows   rows            `json:"rows"`
	Opt    rows            `json:"opt,omitempty"`
	Score  Float           `json:"score"`
	Note   string          `json:"note,omitempty"`
	Ptr    ptrMarshaler    `json:"ptr"`
	Any    any             `json:"any"`
	Skip   string          `json:"-"`
	hidden int             // an unexported field is never written
	Plain  map[string]int  `json:"plain"`
	Nested map[string]*inn `json:"nested"`
	NoTag  int
}

type inn struct {
	R rows `json:"r"`
}

type outer struct {
	Dims  map[string]*inner `json:"dims"`
	List  []inner           `json:"list"`
	Null  *inner            `json:"null"`
	Arr   [2]rows           `json:"arr"`
	Title string            `json:"title"`
}

// A value holding JSONStreamers is written by the walk (streams), byte for
// byte as json.Encoder writes it whole, wherever they are: under pointers,
// maps, slices, arrays, beside omitempty, "-", Marshalers by value and by
// pointer, interfaces and nils.
func TestWriteJSONStreamsAsEncoder(t *testing.T) {
	mk := func(n int) rows {
		r := make(rows, n)
		for i := range r {
			r[i] = streamRow{ID: fmt.Sprintf("c<%d>\u2028\"", i), Bins: []int{i, i % 3}}
		}
		return r
	}
	v := &outer{
		Dims: map[string]*inner{
			"b": {Rows: mk(7), Score: Float(math.NaN()), Any: map[string]any{"x": []int{1}}, Skip: "no", hidden: 5, Plain: map[string]int{"z": 1, "a": 2}},
			"a": {Rows: mk(0), Opt: mk(2), Note: "n", Nested: map[string]*inn{"k": {R: mk(4)}, "j": nil}},
			"c": nil,
		},
		List:  []inner{{Rows: mk(1)}, {}},
		Arr:   [2]rows{mk(3), nil},
		Title: "<&>",
	}
	require.True(t, streams(reflect.TypeOf(v)))
	require.False(t, streams(reflect.TypeOf(map[string]any{})))
	for _, x := range []any{v, *v, v.Dims, v.List, mk(5), []any{v}} {
		var w smallWrites
		require.NoError(t, WriteJSON(&w, x))
		require.Equal(t, string(encoderJSON(t, x)), w.String())
	}
	var w failWriter
	require.EqualError(t, WriteJSON(&w, v), "disk full")
}

// A type the walk does not model (an embedded field, a ",string" option) is
// marshalled whole, as before: the same bytes.
func TestWriteJSONStreamsOnlyWhatItModels(t *testing.T) {
	type embedded struct {
		inn
		N int `json:"n"`
	}
	type quoted struct {
		R rows `json:"r"`
		N int  `json:"n,string"`
	}
	for _, x := range []any{embedded{inn{rows{{ID: "a"}}}, 1}, quoted{rows{{ID: "b"}}, 2}} {
		assert.False(t, streams(reflect.TypeOf(x)))
		var b bytes.Buffer
		require.NoError(t, WriteJSON(&b, x))
		assert.Equal(t, string(encoderJSON(t, x)), b.String())
	}
}

// A streamed list is not marshalled whole: WriteJSON allocates a fraction of
// the document (rows marshals 3 rows at a time into one buffer), where
// json.Encoder's buffer alone is the compact document.
func TestWriteJSONStreamMemory(t *testing.T) {
	r := make(rows, 100000)
	for i := range r {
		r[i] = streamRow{ID: "case-" + strings.Repeat("7", i%9), Bins: []int{i % 3, 2}}
	}
	v := &outer{Dims: map[string]*inner{"d": {Rows: r}}}
	size := len(encoderJSON(t, v))
	if racetest.Enabled {
		t.Skip("allocation count under -race")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	require.NoError(t, WriteJSON(io.Discard, v))
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(size/4), "bytes allocated for a %d-byte document", size)
}

// FuzzWriteJSONStream: any text, as map keys, ids of a streamed list and
// plain strings around it, is written by the walk as json.Encoder writes it
// whole (escapes, invalid UTF-8, U+2028, HTML characters).
func FuzzWriteJSONStream(f *testing.F) {
	for _, s := range []string{"", "a", "<&>", "\u2028\"\\", "\xff\xfe", "k\x00"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		r := make(rows, max(0, n%20))
		for i := range r {
			r[i] = streamRow{ID: s + strings.Repeat("x", i), Bins: []int{i}}
		}
		v := &outer{Dims: map[string]*inner{s: {Rows: r, Note: s, Plain: map[string]int{s: 1, s + "b": 2}}, s + "\x00": nil}, Title: s}
		var b bytes.Buffer
		require.NoError(t, WriteJSON(&b, v))
		require.Equal(t, string(encoderJSON(t, v)), b.String())
	})
}

// writeIndented writes src, JSON values as json.Marshal writes them (valid,
// each followed by a newline), to w with two-space indentation exactly as
// json.Indent(dst, src, "", "  ") would write them; white space outside
// strings is dropped as json.Indent drops it, except after a top-level value.
// (The writer itself streams through an indenter; this one-shot form is the
// fuzz target's.)
func writeIndented(w io.Writer, src []byte) error {
	in := &indenter{w: w}
	if err := in.write(src); err != nil {
		return err
	}
	return in.flush()
}
