package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RefWalk reads the first JSON value of data with encoding/json's tokenizer, in
// input order, and reports the first duplicate key (dupKey, dup) or the first
// syntax error (synErr) met; the reference the parser is checked against.
func refWalk(data []byte) (dupKey string, dup bool, synErr bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func() (string, bool, error)
	walk = func() (string, bool, error) {
		tok, err := dec.Token()
		if err != nil {
			return "", false, err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return "", false, nil
		}
		if d == '{' {
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return "", false, err
				}
				k := kt.(string)
				if seen[k] {
					return k, true, nil
				}
				seen[k] = true
				if k, dup, err := walk(); err != nil || dup {
					return k, dup, err
				}
			}
		} else {
			for dec.More() {
				if k, dup, err := walk(); err != nil || dup {
					return k, dup, err
				}
			}
		}
		_, err = dec.Token()
		return "", false, err
	}
	k, dup, err := walk()
	if dup {
		return k, true, false
	}
	if err != nil {
		return "", false, true
	}
	return "", false, !json.Valid(data)
}

// toAny turns a tree into what encoding/json decodes (numbers as json.Number).
func toAny(data []byte, v *Value) any {
	switch v.Kind {
	case Null:
		return nil
	case Bool:
		return v.Bool
	case Number:
		return json.Number(v.Raw(data))
	case String:
		return v.Str
	case Array:
		out := []any{}
		for _, e := range v.Elems {
			out = append(out, toAny(data, e))
		}
		return out
	}
	out := map[string]any{}
	for _, m := range v.Members {
		out[m.Key] = toAny(data, m.Value)
	}
	return out
}

func checkLines(t *testing.T, data []byte, v *Value) {
	t.Helper()
	want := 1 + bytes.Count(data[:v.Off], []byte{'\n'})
	if v.Line != want {
		t.Fatalf("value at %d: line %d, want %d", v.Off, v.Line, want)
	}
	for _, m := range v.Members {
		if l := 1 + bytes.Count(data[:m.Off], []byte{'\n'}); m.Line != l {
			t.Fatalf("key %q at %d: line %d, want %d", m.Key, m.Off, m.Line, l)
		}
		checkLines(t, data, m.Value)
	}
	for _, e := range v.Elems {
		checkLines(t, data, e)
	}
}

func check(t *testing.T, p *Parser, data []byte) {
	v, err := p.Parse(data, 1, 0)
	// Scanner.Check (validation without a tree) agrees with Parse exactly.
	var sc Scanner
	cerr := sc.Check(data)
	if (err == nil) != (cerr == nil) || (err != nil && err.Error() != cerr.Error()) {
		t.Fatalf("%q: Parse says %v, Check says %v", data, err, cerr)
	}
	// And under a cap on values (readback.Parse refuses a document over its
	// cap by Check alone, with the error Parse would give).
	for _, max := range []int{1, 2, 5} {
		sc := Scanner{MaxValues: max}
		pc := Parser{MaxValues: max}
		_, perr := pc.Parse(data, 1, 0)
		cerr := sc.Check(data)
		if (perr == nil) != (cerr == nil) || (perr != nil && perr.Error() != cerr.Error()) {
			t.Fatalf("%q, at most %d values: Parse says %v, Check says %v", data, max, perr, cerr)
		}
	}
	key, dup, syn := refWalk(data)
	var se *SyntaxError
	switch {
	case dup:
		if !errors.As(err, &se) || !se.Dup || !strings.HasPrefix(key, se.Key) {
			t.Fatalf("%q: want duplicate key %q, got %v", data, key, err)
		}
	case syn:
		if !errors.As(err, &se) || se.Dup {
			t.Fatalf("%q: encoding/json rejects it, parser says %v", data, err)
		}
	case err != nil:
		t.Fatalf("%q: encoding/json accepts it, parser says %v", data, err)
	default:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var ref any
		require.NoError(t, dec.Decode(&ref))
		if got := toAny(data, v); !reflect.DeepEqual(got, ref) {
			t.Fatalf("%q:\nparser    %#v\nreference %#v", data, got, ref)
		}
		checkLines(t, data, v)
	}
	if err != nil && len(err.Error()) > 200 {
		t.Fatalf("error message of %d bytes", len(err.Error()))
	}
}

var seeds = []string{
	`{"a":1,"b":[true,false,null,"x\u00e9\ud83d\ude00"],"c":{"d":-1.5e3}}`,
	"{\n \"a\": 1,\n \"a\": 2\n}", `{"a":{"b":1,"b":2}}`, `{"a\u0062":1,"ab":2}`,
	`[{"k":1},{"k":1}]`, `{"a":1} x`, `{"a":}`, `[1,2,]`, `"\ud800"`, "\"a\xffb\"",
	`01`, `1e400`, ` null `, `{"":1,"":2}`, `{"a":[{"b":{"c":[1,{"d":2,"d":3}]}}]}`,
}

func TestParseDifferential(t *testing.T) {
	var p Parser
	for _, s := range seeds {
		check(t, &p, []byte(s))
	}
	// Many keys: the map path of the duplicate check.
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
	}
	check(t, &p, []byte(b.String()+"}"))
	check(t, &p, []byte(b.String()+`,"kxxx":2}`))
}

func TestDuplicateKeyMessage(t *testing.T) {
	var p Parser
	_, err := p.Parse([]byte("{\n  \"id\": \"a\",\n  \"retrieved\": [],\n  \"retrieved\": []\n}"), 1, 0)
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	line, msg := se.DescribeAt([]byte("{\n  \"id\": \"a\",\n  \"retrieved\": [],\n  \"retrieved\": []\n}"))
	assert.Equal(t, 4, line)
	assert.Equal(t, `duplicate key "retrieved" at column 3`, msg)
}

func TestDeepNestingShortMessage(t *testing.T) {
	var p Parser
	data := []byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000))
	_, err := p.Parse(data, 1, 0)
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 100)
	_, err = p.Parse([]byte(strings.Repeat("[", 65)+strings.Repeat("]", 65)), 1, 64)
	assert.ErrorContains(t, err, "nesting deeper than 64")
}

func TestStringsOutliveParse(t *testing.T) {
	var p Parser
	v, err := p.Parse([]byte(`{"a":"first"}`), 1, 0)
	require.NoError(t, err)
	s := v.Get("a").Str
	for range 1000 {
		_, err := p.Parse([]byte(`{"a":"second value, longer"}`), 1, 0)
		require.NoError(t, err)
	}
	assert.Equal(t, "first", s)
}

func FuzzParse(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	var p Parser
	f.Fuzz(func(t *testing.T, data []byte) { check(t, &p, data) })
}

// TestMaxValues: Check and Parse take a record of exactly MaxValues values
// (scalars, arrays and objects; keys are not values) and refuse one more, at the
// offset of the first value past the cap, as an error of its own (Cap: not
// "malformed JSON").
func TestMaxValues(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int // values
		last int // offset of the last value
	}{
		{`0`, 1, 0},
		{`[0,1]`, 3, 3},
		{`{"a":[true,null],"b":{"c":"x"}}`, 6, 26},
		{` [ [ ] , { } ] `, 3, 9},
	} {
		for _, max := range []int{c.n, c.n - 1} {
			var s Scanner
			s.MaxValues = max
			cerr := s.Check([]byte(c.in))
			p := Parser{MaxValues: max}
			_, perr := p.Parse([]byte(c.in), 1, 0)
			if max == c.n {
				require.NoError(t, cerr, c.in)
				require.NoError(t, perr, c.in)
				continue
			}
			if max == 0 {
				continue // 0 is the default cap
			}
			for _, err := range []error{cerr, perr} {
				var se *SyntaxError
				require.ErrorAs(t, err, &se, c.in)
				assert.True(t, se.Cap && se.NotSyntax(), c.in)
				assert.Equal(t, c.last, se.Off, c.in)
				assert.Equal(t, fmt.Sprintf("more than %d values in one record (the cap on what a record may take in memory) at column %d", max, c.last+1), se.Describe())
			}
		}
	}
	// The default: MaxValues, with thousands separators in the message.
	line := []byte("[" + strings.Repeat("0,", MaxValues-2) + "0]")
	var s Scanner
	require.NoError(t, s.Check(line))
	var p Parser
	_, err := p.Parse(line, 1, 0)
	require.NoError(t, err)
	line = []byte("[" + strings.Repeat("0,", MaxValues-1) + "0]")
	require.EqualError(t, s.Check(line), fmt.Sprintf("more than 1,048,576 values in one record (the cap on what a record may take in memory) at column %d", len(line)-1))
	_, err = p.Parse(line, 1, 0)
	require.EqualError(t, err, fmt.Sprintf("more than 1,048,576 values in one record (the cap on what a record may take in memory) at column %d", len(line)-1))
	// A Scanner that checked a record has no cap afterwards on Skip (the cases
	// scanner's use).
	s.Reset(line)
	_, err = s.Skip(0, 0)
	require.NoError(t, err)
}
