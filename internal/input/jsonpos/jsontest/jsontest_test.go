package jsontest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRepeatedKey(t *testing.T) {
	for _, tt := range []struct {
		in   string
		key  string
		dups bool
	}{
		{`{"a":1,"b":2}`, "", false},
		{`{"a":1,"a":2}`, "a", true},
		{`{"a":{"b":1},"c":{"b":2}}`, "", false}, // one key in two objects
		{`{"a":[{"k":1,"k":2}]}`, "k", true},     // in an array's object
		{`{"a":"a","b":["a","a"]}`, "", false},   // values are not keys
		{`{"A":1,"a":2}`, "", false},             // keys as written
		{`{"a":1,`, "", false},                   // not JSON
	} {
		k, dup := RepeatedKey([]byte(tt.in))
		assert.Equal(t, tt.dups, dup, tt.in)
		assert.Equal(t, tt.key, k, tt.in)
	}
}
