package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// Get reads a batch's operation as it arrives too (as Download reads its
// inline responses, gemini_inline.go): a finished inline batch's operation
// holds every response, and Get needs none of them, only geminiOperation's
// fields. A capped tokenizer (opStream) walks the operation token by token and writes those
// fields again as a small JSON text (each inlinedResponses as {}: Get only
// asks whether it is there; null stays null); every other value is read and
// left out. That text is decoded as the whole operation was (UnmarshalAnswer
// into geminiOperation), so Get finds what it found, with its errors: the
// reading's first, then a syntax error anywhere (in encoding/json's words),
// then two keys of one object that differ only in case anywhere (the first in
// the text; before a syntax error that comes after it), then a value of the
// wrong type. What the reading holds is one value at a time (an inline
// response, or a field it keeps: at most GeminiValueCap bytes), the keys of
// the objects open around it (at most geminiMaxKeys each, as Download's
// reading) and the fields it keeps. Unlike the whole reading,
// the values left out are not counted against UnmarshalAnswer's cap on
// values: they are never decoded.

// opShape is what geminiOperation (or one of its fields) keeps of a value.
type opShape struct {
	present bool      // a jsonPresent: whether it is there and not null
	fields  []opField // a struct, or a pointer to one: its fields
	leaf    bool      // anything else: the value as written
}

type opField struct {
	name  string
	shape *opShape
}

// geminiOpShape is geminiOperation's shape.
var geminiOpShape = shapeOf(reflect.TypeFor[geminiOperation]())

// shapeOf is the shape of a value of type t as encoding/json decodes it.
func shapeOf(t reflect.Type) *opShape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[jsonPresent]() {
		return &opShape{present: true}
	}
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return &opShape{leaf: true}
	}
	s := &opShape{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || f.Anonymous || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s.fields = append(s.fields, opField{name, shapeOf(f.Type)})
	}
	return s
}

// field is the shape of the value of key in an object of shape s, nil when s
// keeps none (s nil, or no field of that name: encoding/json matches a
// field's name without regard to case).
func (s *opShape) field(key string) *opShape {
	if s == nil {
		return nil
	}
	for _, f := range s.fields {
		if strings.EqualFold(key, f.name) {
			return f.shape
		}
	}
	return nil
}

// GeminiValueCap bounds one value of a batch's operation as Get and Download
// read it (an inline response, or a field Get keeps; the decoder holds one at
// a time): four times a chat completion's (httpretry.MaxAnswer), room for the longest
// answer a batch's results may hold, pretty-printed. A longer one is a
// *valueTooLongError, read no further.
const GeminiValueCap = 4 * httpretry.MaxAnswer

// valueTooLongError is a value of a batch's operation longer than its cap
// (GeminiValueCap).
type valueTooLongError struct{ Cap int64 }

func (e *valueTooLongError) Error() string {
	return fmt.Sprintf("a value of the batch operation (an inline response, or a field of the batch) is longer than %d MiB: refused, the cap on what reading it may hold", e.Cap>>20)
}

// opReader reads a batch operation for Get (readGeminiOperation).
type opReader struct {
	opStream
	out     []byte // the fields kept, as JSON text
	foldErr error  // the first key that repeats another (CheckFoldedKeys)
}

// readGeminiOperation reads a batch's operation from src as it arrives into
// op, keeping none of its inline responses, no value of it longer than
// maxValue bytes held. Errors of reading src are *readError, a value too long
// a *valueTooLongError; the others are the operation's (what was wrong with
// it, in encoding/json's words: the caller says it is malformed).
func readGeminiOperation(src io.Reader, op *geminiOperation, maxValue int64) error {
	r := &opReader{opStream: newOpStream(src, maxValue)}
	err := r.readErrorFirst(r.document())
	var se *opSyntaxError
	var re *readError
	var tl *valueTooLongError
	switch {
	case errors.As(err, &re) && errors.As(re.err, &tl):
		return tl
	case errors.As(err, &se):
		if r.foldErr != nil { // the repeated key came first in the text
			return r.foldErr
		}
		return errors.New(se.msg)
	case err != nil:
		return err
	case r.foldErr != nil:
		return r.foldErr
	}
	return httpretry.UnmarshalAnswer(r.out, op)
}

// document reads the operation: one value, then nothing but whitespace.
func (r *opReader) document() error {
	tok, err := r.token()
	if err != nil {
		return err
	}
	if err := r.value(tok, geminiOpShape, 0, false); err != nil {
		return err
	}
	return r.end()
}

// mark starts the next value where the decoder is.
func (r *opReader) mark() { r.dec.Mark() }

// token is the decoder's next token (opStream.token), the next value begun.
func (r *opReader) token() (json.Token, error) {
	r.mark()
	return r.opStream.token()
}

// decode reads the next value whole (valid until the next read).
func (r *opReader) decode() ([]byte, error) {
	r.mark()
	raw, err := r.dec.DecodeRaw()
	if err != nil {
		return nil, r.jsonErr(err)
	}
	return raw, nil
}

// value reads the value that starts with tok, at depth open containers, kept
// as s has it (nil: left out). items: it is the array of an inlinedResponses
// kept (its elements, the inline responses, are read one at a time).
func (r *opReader) value(tok json.Token, s *opShape, depth int, items bool) error {
	d, isDelim := tok.(json.Delim)
	if isDelim && depth+1 > maxJSONDepth {
		c := byte('{')
		if d == '[' {
			c = '['
		}
		return &opSyntaxError{"invalid character " + quoteChar(c) + " exceeded max depth"}
	}
	switch {
	case s == nil:
	case tok == nil:
		r.out = append(r.out, "null"...)
		return nil
	case s.present:
		r.out = append(r.out, "{}"...)
		if isDelim && d == '{' {
			return r.container(d, depth, nil, true)
		}
		s = nil
	case isDelim && d == '{': // a struct: its fields
		r.out = append(r.out, '{')
		if err := r.container(d, depth, s, false); err != nil {
			return err
		}
		r.out = append(r.out, '}')
		return nil
	default:
		// Of a type the field cannot hold: a value of its kind is enough
		// for encoding/json to say so.
		r.out = append(r.out, map[bool]string{true: "[]", false: kindOf(tok)}[isDelim]...)
		s = nil
	}
	if !isDelim {
		return nil
	}
	if d == '[' && items {
		return r.items(depth + 1)
	}
	return r.container(d, depth, nil, false)
}

// kindOf is a small JSON value of the kind of the scalar token tok.
func kindOf(tok json.Token) string {
	switch tok.(type) {
	case string:
		return `""`
	case bool:
		return "false"
	}
	return "0"
}

// container reads the members of the object or array that d opened at
// depth, keeping the fields s has. inlined: an inlinedResponses kept, whose
// own inlinedResponses array holds the inline responses.
func (r *opReader) container(d json.Delim, depth int, s *opShape, inlined bool) error {
	r.depth = depth + 1
	defer func() { r.depth = depth }()
	if d == '[' {
		for {
			tok, err := r.token()
			if err != nil {
				return err
			}
			if tok == json.Delim(']') {
				return nil
			}
			if err := r.value(tok, nil, depth+1, false); err != nil {
				return err
			}
		}
	}
	var keys httpretry.FoldedKeys
	first := true
	for {
		// Get's caller says the answer is malformed (opKeyContext).
		key, end, err := objectKey(r.token, &keys, &r.foldErr, opKeyContext)
		if err != nil || end {
			return err
		}
		f := s.field(key)
		if f != nil {
			if !first {
				r.out = append(r.out, ',')
			}
			first = false
			k, _ := json.Marshal(key)
			r.out = append(append(r.out, k...), ':')
		}
		if f != nil && f.leaf {
			raw, err := r.decode()
			if err != nil {
				return err
			}
			if err := checkDepth(raw, depth+1); err != nil {
				return err
			}
			if err := CheckFoldedKeys(raw); err != nil && r.foldErr == nil {
				r.foldErr = err
			}
			r.out = append(r.out, raw...)
			continue
		}
		v, err := r.token()
		if err != nil {
			return err
		}
		if err := r.value(v, f, depth+1, inlined && strings.EqualFold(key, "inlinedResponses")); err != nil {
			return err
		}
	}
}

// items reads an array of inline responses (its '[' read, at depth): each
// whole, checked for repeated keys, and left out.
func (r *opReader) items(depth int) error {
	r.depth = depth
	defer func() { r.depth = depth - 1 }()
	for r.mark(); r.dec.More(); r.mark() {
		raw, err := r.decode()
		if err != nil {
			return err
		}
		if err := checkDepth(raw, depth); err != nil {
			return err
		}
		if err := CheckFoldedKeys(raw); err != nil && r.foldErr == nil {
			r.foldErr = err
		}
	}
	tok, err := r.token()
	if err != nil {
		return err
	}
	if tok != json.Delim(']') {
		return &opSyntaxError{"invalid character after array element"} // as geminiInlineReader.items
	}
	return nil
}
