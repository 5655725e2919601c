package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// CheckFoldedKeys refuses JSON text in which one object has two keys that
// differ only in case ({"custom_id": "a", "CUSTOM_ID": "b"}): encoding/json
// matches a field's name case-insensitively (Unicode simple folding: "ſ" is
// "s") and keeps the last, so such text would be read as the second key's
// value, where a strict reader takes the first; the text is ambiguous, and
// refused as a repeated key is (and a key repeated exactly: "duplicate key",
// as the line readers word it). The same answer is then read the same way
// whichever way it came: a chat completion online, or a line of any batch
// provider's results. Text that is not JSON passes: its syntax is the
// decoder's to report.
func CheckFoldedKeys(data []byte) error {
	type container struct {
		object  bool
		wantKey bool              // an object's next token is a key or its end
		keys    map[string]string // an object's folded keys -> each as first written
	}
	var stack []container
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			// io.EOF: the end; anything else is not JSON, which the caller's
			// decoder words.
			return nil //nolint:nilerr // the syntax error is the caller's decoder's to report
		}
		if top := len(stack) - 1; top >= 0 && stack[top].wantKey {
			if k, ok := tok.(string); ok {
				o := &stack[top]
				o.wantKey = false
				f := foldKey(k)
				if first, dup := o.keys[f]; dup {
					if first == k {
						return fmt.Errorf("duplicate key %s", quoteKey(k))
					}
					return fmt.Errorf("key %s repeats key %s (keys that differ only in case are one field)", quoteKey(k), quoteKey(first))
				}
				if o.keys == nil {
					o.keys = make(map[string]string, 4)
				}
				o.keys[f] = k
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, container{object: true, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, container{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the object that holds it, if any, wants its next key.
		if top := len(stack) - 1; top >= 0 && stack[top].object {
			stack[top].wantKey = true
		}
	}
}

// foldKey maps a key to one representative of its case-folding class: each
// rune becomes the smallest rune of its simple-folding orbit, so two keys have
// the same foldKey exactly when strings.EqualFold holds.
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		lo := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			lo = min(lo, f)
		}
		b.WriteRune(lo)
	}
	return b.String()
}

// quoteKey quotes a key for an error, cut at 80 runes.
func quoteKey(s string) string {
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return strconv.Quote(s)
}

// unmarshalAnswer decodes the JSON answer of u (a batch API's answer: a file,
// a batch, its status) into out. An answer in which one object has a key
// twice, or two keys that differ only in case, is malformed (CheckFoldedKeys),
// as a result line and a chat completion are.
func unmarshalAnswer(data []byte, u string, out any) error {
	err := CheckFoldedKeys(data)
	if err == nil {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		return fmt.Errorf("%s: malformed answer: %w", u, err)
	}
	return nil
}
