// Package jsontest holds references for tests of JSON readers, written apart
// from internal/input/jsonpos (the readers' own rule) so that a test checks one
// against the other.
package jsontest

import (
	"bytes"
	"encoding/json"
)

// RepeatedKey reports a key that one object of the JSON text b has twice
// (keys compared as written), read with encoding/json's tokenizer; false also
// when b is not JSON up to that point.
func RepeatedKey(b []byte) (string, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		keys map[string]bool // nil in an array
		key  bool            // the next token of the object is a key
	}
	var st []*frame
	for {
		tok, err := d.Token()
		if err != nil {
			return "", false
		}
		if n := len(st); n > 0 && st[n-1].keys != nil && st[n-1].key {
			if k, ok := tok.(string); ok {
				if st[n-1].keys[k] {
					return k, true
				}
				st[n-1].keys[k], st[n-1].key = true, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			st = append(st, &frame{keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			st = append(st, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			st = st[:len(st)-1]
		}
		if n := len(st); n > 0 && st[n-1].keys != nil {
			st[n-1].key = true
		}
	}
}
