package format

import (
	"bytes"
	"encoding"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// JSONStreamer is a value WriteJSON writes in pieces instead of marshalling
// it whole: a list long enough that its JSON would be most of a report's
// memory (calibrate's disagreements: a 150 MB compact document at 10M pairs,
// in a buffer grown by doubling). A type that implements it implements
// json.Marshaler too, with the same bytes, for every other writer.
type JSONStreamer interface {
	// StreamJSON writes the value's compact JSON, the bytes json.Marshal
	// writes with HTML characters unescaped, to w in as many writes as it
	// likes.
	StreamJSON(w io.Writer) error
}

var (
	streamerType  = reflect.TypeFor[JSONStreamer]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
	streamsCache  sync.Map // reflect.Type → bool
)

// streams reports whether WriteJSON walks a value of type t to reach a
// JSONStreamer: t is one, or a pointer, slice, array, string-keyed map or
// plain struct (no embedded field, no ",string" or ",omitzero" option, tag
// names of letters, digits and '_', each name once) that holds one where
// WriteJSON can find it by type. Anything else is marshalled whole by
// encoding/json, as before.
func streams(t reflect.Type) bool {
	if v, ok := streamsCache.Load(t); ok {
		return v.(bool)
	}
	streamsCache.Store(t, false) // a recursive type under way: no stream through the cycle
	s := computeStreams(t)
	streamsCache.Store(t, s)
	return s
}

func computeStreams(t reflect.Type) bool {
	if t.Implements(streamerType) {
		return true
	}
	if t.Implements(marshalerType) || t.Implements(textType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textType) {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return streams(t.Elem())
	case reflect.Map:
		return t.Key().Kind() == reflect.String && t.Key().PkgPath() == "" && t.Key().Name() == "string" && streams(t.Elem())
	case reflect.Struct:
		fs, ok := jsonFields(t)
		return ok && slices.ContainsFunc(fs, func(f jsonField) bool { return streams(t.Field(f.index).Type) })
	}
	return false
}

// jsonField is an exported struct field as encoding/json writes it.
type jsonField struct {
	index     int
	key       string // "name":
	omitEmpty bool
}

// jsonFields are the fields of t in the order encoding/json writes them, or
// false where its rules are more than WriteJSON's walk follows.
func jsonFields(t reflect.Type) ([]jsonField, bool) {
	var fs []jsonField
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil, false
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		omit := false
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				omit = true
			default: // string, omitzero, anything newer
				return nil, false
			}
		}
		if name == "" {
			name = sf.Name
		}
		for _, c := range name {
			if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return nil, false
			}
		}
		if seen[name] {
			return nil, false
		}
		seen[name] = true
		fs = append(fs, jsonField{i, `"` + name + `":`, omit})
	}
	return fs, true
}

// jsonStream writes a value that streams as encoding/json would write it
// whole: the walk down to the JSONStreamers, encoding/json for the rest.
type jsonStream struct {
	in  *indenter
	buf bytes.Buffer
	enc *json.Encoder
}

// whole writes v as encoding/json writes it (addressable values by their
// address, so that a pointer receiver's MarshalJSON is called as
// encoding/json calls it).
func (s *jsonStream) whole(v reflect.Value) error {
	if s.enc == nil {
		s.enc = json.NewEncoder(&s.buf)
		s.enc.SetEscapeHTML(false)
	}
	s.buf.Reset()
	x := v.Interface()
	if v.CanAddr() {
		x = v.Addr().Interface()
	}
	if err := s.enc.Encode(x); err != nil {
		return err
	}
	return s.in.write(bytes.TrimSuffix(s.buf.Bytes(), []byte{'\n'}))
}

func (s *jsonStream) raw(b string) error { return s.in.write([]byte(b)) }

func (s *jsonStream) value(v reflect.Value) error {
	t := v.Type()
	if !streams(t) {
		return s.whole(v)
	}
	if t.Kind() == reflect.Pointer && v.IsNil() {
		return s.raw("null")
	}
	if t.Implements(streamerType) {
		return v.Interface().(JSONStreamer).StreamJSON(s.in)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return s.value(v.Elem())
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && v.IsNil() {
			return s.raw("null")
		}
		if err := s.raw("["); err != nil {
			return err
		}
		for i := range v.Len() {
			if i > 0 {
				if err := s.raw(","); err != nil {
					return err
				}
			}
			if err := s.value(v.Index(i)); err != nil {
				return err
			}
		}
		return s.raw("]")
	case reflect.Map:
		if v.IsNil() {
			return s.raw("null")
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		if err := s.raw("{"); err != nil {
			return err
		}
		for i, k := range keys {
			if i > 0 {
				if err := s.raw(","); err != nil {
					return err
				}
			}
			if err := s.whole(k); err != nil {
				return err
			}
			if err := s.raw(":"); err != nil {
				return err
			}
			if err := s.value(v.MapIndex(k)); err != nil {
				return err
			}
		}
		return s.raw("}")
	default: // reflect.Struct
		fs, _ := jsonFields(t)
		if err := s.raw("{"); err != nil {
			return err
		}
		first := true
		for _, f := range fs {
			fv := v.Field(f.index)
			if f.omitEmpty && emptyJSON(fv) {
				continue
			}
			key := f.key
			if !first {
				key = "," + key
			}
			first = false
			if err := s.raw(key); err != nil {
				return err
			}
			if err := s.value(fv); err != nil {
				return err
			}
		}
		return s.raw("}")
	}
}

// emptyJSON is encoding/json's omitempty test.
func emptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
