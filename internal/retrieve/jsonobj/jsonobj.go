// Package jsonobj edits the top-level members of one JSON object in place, keeping
// every other byte: untouched members keep their order, spacing and spelling.
// retrieve uses it to fill `retrieved` and `retrieval` of a case line.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Member is a key and its new raw JSON value.
type Member struct {
	Key   string
	Value []byte // valid JSON
}

type span struct {
	key               string
	start             int // first byte of the key's opening quote
	valStart, valEnd  int // the value's bytes
	sepStart, sepSize int // the bytes between key and value (":" with spacing)
}

// Set replaces the value of each given key in the JSON object raw (the first
// occurrence; later duplicates of that key are removed) and appends the keys the
// object lacks, in the given order, after its last member. Appended members copy
// the object's key/value separator style (": " or ":").
func Set(raw []byte, members []Member) ([]byte, error) {
	spans, open, err := scan(raw)
	if err != nil {
		return nil, err
	}
	want := map[string]int{}
	for i, m := range members {
		want[m.Key] = i
	}
	done := make([]bool, len(members))
	var out bytes.Buffer
	out.Grow(len(raw) + 256)
	pos := 0
	prevEnd := open + 1 // end of the previous kept member's value (or just after '{')
	for _, s := range spans {
		i, ok := want[s.key]
		switch {
		case ok && done[i]:
			// A duplicate: drop it together with the separator before it.
			out.Write(raw[pos:prevEnd])
			pos = s.valEnd
		case ok:
			out.Write(raw[pos:s.valStart])
			out.Write(members[i].Value)
			pos = s.valEnd
			done[i] = true
			prevEnd = s.valEnd
		default:
			prevEnd = s.valEnd
		}
	}
	out.Write(raw[pos:prevEnd])
	sep := []byte(": ")
	if len(spans) > 0 && string(raw[spans[0].sepStart:spans[0].sepStart+spans[0].sepSize]) == ":" {
		sep = []byte(":")
	}
	comma := []byte(", ")
	if string(sep) == ":" {
		comma = []byte(",")
	}
	kept := len(spans) > 0
	for i, m := range members {
		if done[i] {
			continue
		}
		if kept {
			out.Write(comma)
		}
		k, _ := json.Marshal(m.Key)
		out.Write(k)
		out.Write(sep)
		out.Write(m.Value)
		kept = true
	}
	out.Write(raw[prevEnd:])
	return out.Bytes(), nil
}

// scan returns the members of the object raw and the offset of its '{'.
func scan(raw []byte) (spans []span, open int, err error) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, 0, errors.New("not a JSON object")
	}
	open = i
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		if j := skipWS(raw, i+1); j != len(raw) {
			return nil, 0, errors.New("trailing bytes after the object")
		}
		return nil, open, nil
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, 0, fmt.Errorf("expected a key at byte %d", i)
		}
		kend, err := skipString(raw, i)
		if err != nil {
			return nil, 0, err
		}
		var key string
		if err := json.Unmarshal(raw[i:kend], &key); err != nil {
			return nil, 0, fmt.Errorf("bad key at byte %d: %w", i, err)
		}
		s := span{key: key, start: i, sepStart: kend}
		j := skipWS(raw, kend)
		if j >= len(raw) || raw[j] != ':' {
			return nil, 0, fmt.Errorf("expected ':' at byte %d", j)
		}
		j = skipWS(raw, j+1)
		s.sepSize = j - kend
		s.valStart = j
		s.valEnd, err = skipValue(raw, j)
		if err != nil {
			return nil, 0, err
		}
		spans = append(spans, s)
		i = skipWS(raw, s.valEnd)
		if i >= len(raw) {
			return nil, 0, errors.New("unterminated object")
		}
		if raw[i] == '}' {
			if j := skipWS(raw, i+1); j != len(raw) {
				return nil, 0, errors.New("trailing bytes after the object")
			}
			return spans, open, nil
		}
		if raw[i] != ',' {
			return nil, 0, fmt.Errorf("expected ',' or '}' at byte %d", i)
		}
		i = skipWS(raw, i+1)
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset just after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errors.New("unterminated string")
}

// skipValue returns the offset just after the value starting at b[i]; the
// value's syntax is checked by encoding/json.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("missing value")
	}
	end := i
	switch b[i] {
	case '"':
		e, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		end = e
	case '{', '[':
		depth := 0
		j := i
		for ; j < len(b); j++ {
			switch b[j] {
			case '"':
				e, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			if depth == 0 {
				break
			}
		}
		if depth != 0 {
			return 0, errors.New("unterminated value")
		}
		end = j + 1
	default:
		j := i
		for j < len(b) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(b[j])) {
			j++
		}
		end = j
	}
	if !json.Valid(b[i:end]) {
		return 0, fmt.Errorf("invalid value at byte %d", i)
	}
	return end, nil
}
