package input

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

type valueReader struct{}

func (valueReader) Read([]byte) (int, error) { return 0, io.EOF }

func TestIsNil(t *testing.T) {
	for name, tc := range map[string]struct {
		r    io.Reader
		want bool
	}{
		"nil":                {nil, true},
		"nil *os.File":       {(*os.File)(nil), true},
		"nil *bytes.Buffer":  {(*bytes.Buffer)(nil), true},
		"nil func":           {readerFunc(nil), true},
		"a reader":           {strings.NewReader("x"), false},
		"a file":             {os.Stdin, false},
		"a func":             {readerFunc(func([]byte) (int, error) { return 0, io.EOF }), false},
		"a value, not a nil": {valueReader{}, false},
	} {
		assert.Equal(t, tc.want, IsNil(tc.r), name)
	}
}
