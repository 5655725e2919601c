package codetest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder is a testing.TB that keeps the failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

type fatal struct{}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(fatal{})
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func run(t *testing.T, dir, list string) []string {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(fatal); !ok {
					panic(v)
				}
			}
		}()
		Complete(r, dir, "Kind", list)
	}()
	return r.errs
}

func TestComplete(t *testing.T) {
	tests := []struct {
		name, dir, list string
		want            []string
	}{
		{"every constant listed", "testdata/good", "Kinds", nil},
		{"a constant missing", "testdata/missing", "Kinds", []string{"testdata/missing: the Kind constant B is not in Kinds"}},
		{"listed twice, and not a constant of the type", "testdata/extra", "Kinds", []string{
			"testdata/extra: Kinds lists A twice",
			"testdata/extra: Kinds lists Other, which is not a Kind constant",
		}},
		{"no list", "testdata/good", "Nope", []string{"testdata/good: no variable Nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, run(t, tt.dir, tt.list))
		})
	}
}
