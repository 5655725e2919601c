// Package jsonobj edits the top-level members of one JSON object in place, keeping
// every other byte: untouched members keep their order, spacing and spelling.
// retrieve uses it to fill `retrieved` and `retrieval` of a case line. The object
// is read with jsonpos: strict JSON, a repeated key refused.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// Member is a key and its new raw JSON value.
type Member struct {
	Key   string
	Value []byte // valid JSON
}

// Set replaces the value of each given key in the JSON object raw and appends
// the keys the object lacks, in the given order, after its last member.
// Appended members copy the object's key/value separator style (": " or ":").
// raw must be one JSON object without repeated keys; errors are
// *jsonpos.SyntaxError or say what else is wrong.
func Set(raw []byte, members []Member) ([]byte, error) {
	var p jsonpos.Parser
	obj, err := p.Parse(raw, 1, 0)
	if err != nil {
		return nil, err
	}
	if obj.Kind != jsonpos.Object {
		return nil, errors.New("not a JSON object")
	}
	want := make(map[string]int, len(members))
	for i, m := range members {
		want[m.Key] = i
	}
	done := make([]bool, len(members))
	var out bytes.Buffer
	out.Grow(len(raw) + 256)
	pos := 0
	for _, m := range obj.Members {
		if i, ok := want[m.Key]; ok {
			out.Write(raw[pos:m.Value.Off])
			out.Write(members[i].Value)
			pos = m.Value.End
			done[i] = true
		}
	}
	// The end of the last member's value, or just after '{'.
	last := bytes.IndexByte(raw, '{') + 1
	sep := []byte(": ")
	if n := len(obj.Members); n > 0 {
		last = obj.Members[n-1].Value.End
		s := jsonpos.Scanner{B: raw}
		if kend, _, err := s.String(obj.Members[0].Off); err == nil && string(raw[kend:obj.Members[0].Value.Off]) == ":" {
			sep = []byte(":")
		}
	}
	out.Write(raw[pos:last])
	comma := []byte(", ")
	if string(sep) == ":" {
		comma = []byte(",")
	}
	kept := len(obj.Members) > 0
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
	out.Write(raw[last:])
	return out.Bytes(), nil
}
