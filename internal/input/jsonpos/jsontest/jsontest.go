// Package jsontest holds references for tests of JSON readers, written apart
// from internal/input/jsonpos (the readers' own rule) so that a test checks one
// against the other.
package jsontest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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

// Decode decodes data as one generic JSON value through encoding/json's token
// stream, numbers kept as written (json.Number): the tests' reference reader
// of a server's answer, apart from the clients and from jsonpos. ok is false
// when data is not exactly one JSON value; ambiguous reports an object in it
// with a key twice, exactly or up to case (strings.EqualFold), which the
// clients must refuse (httpretry.CheckFoldedKeys).
func Decode(data []byte) (v any, ok, ambiguous bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var value func() (any, error)
	value = func() (any, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch tok {
		case json.Delim('{'):
			obj := map[string]any{}
			var keys []string
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key := k.(string)
				for _, p := range keys {
					ambiguous = ambiguous || strings.EqualFold(p, key)
				}
				keys = append(keys, key)
				if obj[key], err = value(); err != nil {
					return nil, err
				}
			}
			_, err = dec.Token()
			return obj, err
		case json.Delim('['):
			arr := []any{}
			for dec.More() {
				x, err := value()
				if err != nil {
					return nil, err
				}
				arr = append(arr, x)
			}
			_, err = dec.Token()
			return arr, err
		}
		return tok, nil
	}
	v, err := value()
	if err != nil {
		return nil, false, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false, false
	}
	return v, true, ambiguous
}

// Strict is Decode refusing an ambiguous value: ok is false also when an
// object has a key twice, exactly or up to case.
func Strict(data []byte) (v any, ok bool) {
	v, ok, ambiguous := Decode(data)
	if !ok || ambiguous {
		return nil, false
	}
	return v, true
}

// Field is the value of obj's key that is name up to case (how encoding/json
// matches a field), nil when there is none.
func Field(obj map[string]any, name string) any {
	for k, x := range obj {
		if strings.EqualFold(k, name) {
			return x
		}
	}
	return nil
}

// Agree holds a reader to a reference written apart from it, on one body:
// where the reference refuses the body (ok false) the reader must fail, and
// where it accepts the body the reader must succeed with the reference's
// value (want).
func Agree[T any](t testing.TB, body []byte, want T, ok bool, got T, err error) {
	t.Helper()
	if !ok {
		require.Error(t, err, "accepted an answer a strict reader refuses: %q", body)
		return
	}
	require.NoError(t, err, "refused an answer a strict reader accepts: %q", body)
	require.Equal(t, want, got)
}

// AnswerClient is an HTTP client whose every request is answered 200 with
// body as JSON, without a socket (a fuzz input costs microseconds): a
// server's answer for a client's reader.
func AnswerClient(body []byte) *http.Client {
	return &http.Client{Transport: answerTransport(body)}
}

type answerTransport []byte

func (b answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: r}, nil
}
