package httpretry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// CheckFoldedKeys refuses JSON text in which one object has two keys that
// differ only in case ({"custom_id": "a", "CUSTOM_ID": "b"}): encoding/json
// matches a field's name case-insensitively (Unicode simple folding: "ſ" is
// "s") and keeps the last, so such text would be read as the second key's
// value, where a strict reader takes the first; the text is ambiguous, and
// refused as a repeated key is (and a key repeated exactly: "duplicate key",
// as the line readers word it). The same answer is then read the same way
// whichever way it came: a chat completion online, or a line of any batch
// provider's results, an embedding server's or a reranker's answer
// (UnmarshalAnswer). Text that is not JSON passes: its syntax is the
// decoder's to report (what such text gives is unspecified).
//
// It scans the bytes once, without decoding the values (a result line of a
// batch is checked before it is decoded): an object's keys are compared as
// written, with bytes.EqualFold (strings.EqualFold's folding), decoded only
// when one holds an escape; an object of more than maxPairwiseKeys keys is
// checked through a map of folded keys instead of pairwise.
func CheckFoldedKeys(data []byte) error { return checkAnswer(data, 0) }

// checkAnswer is CheckFoldedKeys, and with maxValues > 0 the cap on the
// answer's values too, counted in the same scan as the brackets and commas
// outside strings (about one a value: each value but a container's first
// follows a comma).
func checkAnswer(data []byte, maxValues int) error {
	type container struct {
		object bool
		first  int               // the index in keys of the object's first key
		folded map[string]string // past maxPairwiseKeys: folded key -> the key
	}
	var stackBuf [16]container
	var keysBuf [32]keySpan
	stack, keys := stackBuf[:0], keysBuf[:0]
	wantKey := false // the next string is a key of the innermost object
	values := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{', '[', ',':
			if values++; maxValues > 0 && values > maxValues {
				return fmt.Errorf("the answer holds more than %s values (the cap on what an answer may take in memory)", format.Thousands(maxValues))
			}
		}
		switch data[i] {
		case '{', '[':
			if len(stack) == maxNesting {
				return nil // encoding/json refuses it: "exceeded max depth"
			}
			stack = append(stack, container{object: data[i] == '{', first: len(keys)})
			wantKey = data[i] == '{'
		case '}', ']':
			if len(stack) == 0 {
				return nil // not JSON: the caller's decoder words it
			}
			keys = keys[:stack[len(stack)-1].first]
			stack = stack[:len(stack)-1]
			wantKey = false
		case ',':
			wantKey = len(stack) > 0 && stack[len(stack)-1].object
		case '"':
			k, ok := scanString(data, i)
			if !ok {
				return nil // not JSON
			}
			i = k.end
			if !wantKey {
				continue
			}
			wantKey = false
			o := &stack[len(stack)-1]
			prev := keys[o.first:]
			if o.folded == nil && len(prev) < maxPairwiseKeys {
				for _, p := range prev {
					if same, exact := k.foldEqual(data, p); same {
						return foldedKeyError(data, k, p, exact)
					}
				}
				keys = append(keys, k)
				continue
			}
			if o.folded == nil {
				o.folded = make(map[string]string, 2*maxPairwiseKeys)
				for _, p := range prev {
					o.folded[foldKey(p.text(data))] = p.text(data)
				}
			}
			t := k.text(data)
			if first, dup := o.folded[foldKey(t)]; dup {
				if first == t {
					return fmt.Errorf("duplicate key %s", quoteKey(t))
				}
				return fmt.Errorf("key %s repeats key %s (keys that differ only in case are one field)", quoteKey(t), quoteKey(first))
			}
			o.folded[foldKey(t)] = t
		}
	}
	return nil
}

// FoldedKeys are the keys of one object of a text read as a stream (a
// json.Decoder's tokens), compared as CheckFoldedKeys compares them: Add
// refuses a key that repeats one already added, exactly or differing only in
// case, in CheckFoldedKeys's words. The zero value is an empty object.
type FoldedKeys struct {
	keys   []string
	folded map[string]string // past maxPairwiseKeys: folded key -> the key
}

// Len is the number of keys added.
func (f *FoldedKeys) Len() int {
	if f.folded != nil {
		return len(f.folded)
	}
	return len(f.keys)
}

// Add records the key k (decoded), or reports it as a repeat.
func (f *FoldedKeys) Add(k string) error {
	if f.folded == nil && len(f.keys) < maxPairwiseKeys {
		for _, p := range f.keys {
			if strings.EqualFold(k, p) {
				return repeatedKeyError(k, p)
			}
		}
		f.keys = append(f.keys, k)
		return nil
	}
	if f.folded == nil {
		f.folded = make(map[string]string, 2*maxPairwiseKeys)
		for _, p := range f.keys {
			f.folded[foldKey(p)] = p
		}
		f.keys = nil
	}
	if first, dup := f.folded[foldKey(k)]; dup {
		return repeatedKeyError(k, first)
	}
	f.folded[foldKey(k)] = k
	return nil
}

// repeatedKeyError is the error of the key k that repeats the earlier key p.
func repeatedKeyError(k, p string) error {
	if k == p {
		return fmt.Errorf("duplicate key %s", quoteKey(k))
	}
	return fmt.Errorf("key %s repeats key %s (keys that differ only in case are one field)", quoteKey(k), quoteKey(p))
}

// maxNesting is encoding/json's bound on the nesting of a text it decodes:
// deeper text is not JSON to it, and the scan keeps no more frames.
const maxNesting = 10000

// maxPairwiseKeys is the most keys of an object CheckFoldedKeys compares
// pairwise.
const maxPairwiseKeys = 16

// keySpan is a key of the text: its bytes between the quotes, data[start:end],
// and whether they hold an escape.
type keySpan struct {
	start, end int
	esc        bool
}

// scanString is the string whose opening quote is data[i]; false when it is
// not closed.
func scanString(data []byte, i int) (keySpan, bool) {
	k := keySpan{start: i + 1}
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			k.esc = true
			j++
		case '"':
			k.end = j
			return k, true
		}
	}
	return k, false
}

// text is the key decoded.
func (k keySpan) text(data []byte) string {
	raw := data[k.start:k.end]
	if !k.esc {
		return string(raw)
	}
	var s string
	if json.Unmarshal(data[k.start-1:k.end+1], &s) != nil {
		return string(raw) // a bad escape: the caller's decoder words it
	}
	return s
}

// foldEqual reports whether the keys k and p are one field for encoding/json
// (equal under simple case folding), and whether they are equal exactly.
func (k keySpan) foldEqual(data []byte, p keySpan) (same, exact bool) {
	if !k.esc && !p.esc {
		a, b := data[k.start:k.end], data[p.start:p.end]
		return bytes.EqualFold(a, b), bytes.Equal(a, b)
	}
	a, b := k.text(data), p.text(data)
	return strings.EqualFold(a, b), a == b
}

// foldedKeyError is the error of the key k that repeats the earlier key p.
func foldedKeyError(data []byte, k, p keySpan, exact bool) error {
	if exact {
		return fmt.Errorf("duplicate key %s", quoteKey(k.text(data)))
	}
	return fmt.Errorf("key %s repeats key %s (keys that differ only in case are one field)", quoteKey(k.text(data)), quoteKey(p.text(data)))
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

// UnmarshalAnswer decodes a server's JSON answer into out, refusing first an
// answer CheckFoldedKeys refuses: encoding/json alone would read such an
// answer as its last key's value, where a strict reader takes the first.
// Its values are capped at MaxAnswerValues: a byte cap alone does not bound
// what an answer costs decoded (a 64 MiB page of "{}," took 5.3 GB as GitLab
// notes). UnmarshalAnswerCap sets another cap.
func UnmarshalAnswer(data []byte, out any) error {
	return UnmarshalAnswerCap(data, out, MaxAnswerValues)
}

// MaxAnswerValues is UnmarshalAnswer's cap on an answer's values: more than a
// batch of 64 embeddings of 8,192 dimensions, or a page of a hundred of any
// forge's objects, holds.
const MaxAnswerValues = 1 << 22

// MaxPageValues caps the values of a forge's answer of at most a hundred
// objects (a page of GitLab's notes, of GitHub's artifacts): 655 values an
// object.
const MaxPageValues = 1 << 16

// UnmarshalAnswerCap is UnmarshalAnswer with a cap of maxValues values (0: no
// cap but the answer's byte cap, for an answer whose size its caller bounds
// from what it asked for).
func UnmarshalAnswerCap(data []byte, out any, maxValues int) error {
	if err := checkAnswer(data, maxValues); err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
