package jsoncap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonWalk walks in with ops (0: Token, 1: More, 2: Decode into a
// json.RawMessage; cycled) through one reader's token, more and decode, and
// writes what each gave, up to the first error, with what buffered gives
// after the errors a caller may ask it of (afterError).
func jsonWalk(ops []byte, token func() (json.Token, error), more func() bool, decode func() ([]byte, error), offset func() int64, buffered func() io.Reader) string {
	var b strings.Builder
	if len(ops) == 0 {
		ops = []byte{0}
	}
	for i := 0; i < 200; i++ {
		var err error
		switch ops[i%len(ops)] % 3 {
		case 0:
			var tok json.Token
			tok, err = token()
			if err == nil {
				fmt.Fprintf(&b, "token %T %v @%d\n", tok, tok, offset())
			}
		case 1:
			fmt.Fprintf(&b, "more %v\n", more())
		case 2:
			var raw []byte
			raw, err = decode()
			if err == nil {
				fmt.Fprintf(&b, "raw %q @%d\n", raw, offset())
			}
		}
		if err != nil {
			afterError(&b, err, buffered())
			var se *json.SyntaxError
			var me *SyntaxError
			switch {
			case errors.As(err, &se):
				fmt.Fprintf(&b, "syntax error %v\n", se) // its Offset is not the byte's (the scanner's count in the Decoder's buffer)
			case errors.As(err, &me):
				fmt.Fprintf(&b, "syntax error %v\n", me)
			case errors.Is(err, io.ErrUnexpectedEOF):
				b.WriteString("unexpected EOF\n")
			case errors.Is(err, io.EOF):
				b.WriteString("EOF\n")
			default:
				fmt.Fprintf(&b, "error %v\n", err)
			}
			return b.String()
		}
	}
	return b.String()
}

// afterError writes what Buffered gives after err where the Scanner's is
// the Decoder's: after io.ErrUnexpectedEOF, the value the input ended in;
// after an expected comma or colon, the byte in its place. The Decoder's
// begins with the white space before the value; the Scanner's does not.
func afterError(b *strings.Builder, err error, buffered io.Reader) {
	rest, rerr := io.ReadAll(buffered)
	if rerr != nil {
		fmt.Fprintf(b, "buffered: %v\n", rerr)
		return
	}
	rest = bytes.TrimLeft(rest, " \t\r\n")
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		fmt.Fprintf(b, "buffered %q\n", rest)
	case strings.HasPrefix(err.Error(), "expected "):
		fmt.Fprintf(b, "buffered %q\n", rest[:min(len(rest), 1)])
	}
}

func stdJSONWalk(in string, ops []byte) string {
	dec := json.NewDecoder(strings.NewReader(in))
	dec.UseNumber()
	return jsonWalk(ops, dec.Token, dec.More, func() ([]byte, error) {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		return raw, err
	}, dec.InputOffset, dec.Buffered)
}

func ownJSONWalk(in string, ops []byte, size int) string {
	s := New(bufio.NewReaderSize(strings.NewReader(in), size), 1<<40, errors.New("too long"))
	return jsonWalk(ops, s.Token, s.More, s.DecodeRaw, s.InputOffset, s.Buffered)
}

var jsonSeeds = []struct{ in, ops string }{
	{`[{"a": 1}, {"b": [1, 2]}]`, "\x00\x01\x02\x01\x02\x01\x00\x00"},
	{`{"results": {"results": [{"vars": {"q": "x"}}], "x": 1}, "config": {}}`, "\x00\x00\x00\x00\x01\x02\x01\x00\x00\x02\x01\x00\x00\x02\x00"},
	{`{"q1": {"a": 1.5e3, "b": -0}, "q2": {}}`, "\x00\x01\x00\x02\x01\x00\x02\x01\x00\x00"},
	{"[\n  {\"user_input\": \"q\"},\n  {\"user_input\" \"q\"}\n]\n", "\x00\x01\x02\x01\x02"},
	{"[\n  {\"user_input\": \"q\"},\n", "\x00\x01\x02\x01\x00"},
	{`[1, 2 3]`, "\x00\x02\x02\x02"}, {`[1,,2]`, "\x00\x02\x00"}, {`{"a" 1}`, "\x00\x00\x02"}, {`{"a": 1 "b": 2}`, "\x00\x00\x02\x00"},
	{`[tru, nul, "a\"]\\", {"]": "["}]`, "\x00\x02\x02"}, {`["a\"]", {"x": "}"}, 12x]`, "\x00\x02\x02\x02\x02"},
	{`{"a": [1, {"b": "\u00e9\ud83d"}]} {"b": 2}`, "\x02\x00\x00"}, {`]`, "\x00"}, {`}`, "\x02"}, {`:`, "\x00"}, {`,`, "\x00"},
	{`"\x"`, "\x02"}, {`{"a`, "\x00\x00"}, {`[1`, "\x00\x02"}, {`[-]`, "\x00\x02"}, {`[01]`, "\x00\x02"}, {` 1 2 `, "\x02\x02\x02"},
	{"\ufeff[]", "\x00"}, {`{"a":1}}`, "\x02\x00"}, {`[{"a":[1}]]`, "\x00\x02"}, {`{1: 2}`, "\x00\x00"}, {`{"a": 1, }`, "\x00\x00\x02\x00"},
	{`[true, false, null, "s", 1]`, "\x00\x00\x00\x00\x00\x00\x00\x00"},
	{`[1, nul`, "\x00\x02\x02"}, {`[1, -`, "\x00\x00\x00"}, {`[1,  {"a": [1, 2`, "\x00\x02\x02"}, {`{"a": 1, "b`, "\x00\x00\x02\x00"},
	{`{"a": 1, "b" 2}`, "\x00\x00\x02\x00\x02"}, {`[1 ; 2]`, "\x00\x02\x02"}, {`[1, 12.`, "\x00\x02\x02"}, {"[1, \"a\\", "\x00\x02\x00"},
}

// jsonScan gives what encoding/json's Decoder gives through Token, More and
// Decode into a json.RawMessage: the same tokens, values, offsets and syntax
// errors.
func TestJSONScanAsDecoder(t *testing.T) {
	for _, tc := range jsonSeeds {
		for _, size := range []int{16, 4096} {
			assert.Equal(t, stdJSONWalk(tc.in, []byte(tc.ops)), ownJSONWalk(tc.in, []byte(tc.ops), size), "%q %q, buffer %d", tc.in, tc.ops, size)
		}
	}
}

// FuzzJSONScan: jsonScan and encoding/json's Decoder agree on any input
// under the cap and any walk of it, whatever pieces bufio cuts it into.
func FuzzJSONScan(f *testing.F) {
	for _, tc := range jsonSeeds {
		f.Add(tc.in, []byte(tc.ops), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in string, ops []byte, size uint8) {
		require.Equal(t, stdJSONWalk(in, ops), ownJSONWalk(in, ops, 16+int(size)))
	})
}

// A read that passes the cap refuses every read after it, as the Decoder
// behind a capped reader did: the document is not read on from the middle of
// what was refused (white space over the cap, then a value, is not that
// value).
func TestRefusedStaysRefused(t *testing.T) {
	tooLong := errors.New("too long")
	for _, tc := range []struct{ name, in string }{
		{"a value", `[1, "aaaaaaaaaaaaaaaa", 2]`},
		{"white space", `[1` + strings.Repeat(" ", 12) + `, 2]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A byte at a time: the white space is skipped as it comes.
			s := New(bufio.NewReaderSize(iotest.OneByteReader(strings.NewReader(tc.in)), 16), 8, tooLong)
			tok, err := s.Token()
			require.NoError(t, err)
			require.Equal(t, json.Delim('['), tok)
			s.Mark()
			raw, err := s.DecodeRaw()
			require.NoError(t, err)
			require.Equal(t, "1", string(raw))
			s.Mark()
			if s.More() {
				_, err = s.DecodeRaw()
				require.ErrorIs(t, err, tooLong)
			}
			s.Mark()
			assert.False(t, s.More())
			s.Mark()
			_, err = s.Token()
			require.ErrorIs(t, err, tooLong)
			s.Mark()
			_, err = s.DecodeRaw()
			require.ErrorIs(t, err, tooLong)
		})
	}
}

// Buffered after the input ended in a value holds the value's bytes read,
// no more than the cap: the Decoder's held all its buffer.
func TestBufferedFragment(t *testing.T) {
	in := `[1, {"a": "` + strings.Repeat("x", 100)
	s := New(bufio.NewReaderSize(strings.NewReader(in), 16), 1<<10, errors.New("too long"))
	_, err := s.Token()
	require.NoError(t, err)
	_, err = s.DecodeRaw()
	require.NoError(t, err)
	_, err = s.DecodeRaw()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	rest, err := io.ReadAll(s.Buffered())
	require.NoError(t, err)
	assert.Equal(t, `{"a": "`+strings.Repeat("x", 100), string(rest))
}

// A string token is decoded from the value's bytes alone: its pieces, the
// bytes joined and the string, three times its length allocated (13.1 MB
// for 4 MiB). Read by a Decoder over the joined bytes it was seven (29.9 MB:
// the Decoder's buffer grown by doubling, then the string), and a 15 MiB
// field of a Gemini operation left out took 83 MB. Allocation-measured.
func TestLongStringTokenAllocs(t *testing.T) {
	const n = 4 << 20
	in := `{"x": "` + strings.Repeat("a", n) + `"}`
	s := New(bufio.NewReaderSize(strings.NewReader(in), 32<<10), 1<<30, errors.New("too long"))
	_, err := s.Token()
	require.NoError(t, err)
	_, err = s.Token()
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tok, err := s.Token()
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Len(t, tok.(string), n)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes allocated", alloc)
	assert.Less(t, alloc, uint64(3*n+n/2), "bytes allocated")
}
