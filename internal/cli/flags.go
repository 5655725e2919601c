package cli

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
)

// valueError is a flag value's refusal, phrased to follow the value:
// `"five" is not an integer`, `"sometimes" is not one of auto, always, never`.
type valueError struct{ phrase string }

func (e *valueError) Error() string { return e.phrase }

// enumValue is a string flag that takes one of a fixed set of values.
type enumValue struct {
	p       *string
	choices []string
}

// enumVar defines a flag that accepts only choices; def is its default.
func enumVar(fs *flag.FlagSet, p *string, name, def string, choices []string, usage string) {
	*p = def
	fs.Var(&enumValue{p: p, choices: choices}, name, usage)
}

func (e *enumValue) String() string {
	if e == nil || e.p == nil {
		return ""
	}
	return *e.p
}

func (e *enumValue) Set(v string) error {
	for _, c := range e.choices {
		if v == c {
			*e.p = v
			return nil
		}
	}
	return &valueError{"is not one of " + strings.Join(e.choices, ", ")}
}

// floorValue is a gate floor: a number in [0,1], or none / empty for off.
type floorValue struct{ f *gate.Floor }

func floorVar(fs *flag.FlagSet, f *gate.Floor, name, usage string) {
	fs.Var(&floorValue{f: f}, name, usage)
}

func (v *floorValue) String() string {
	if v == nil || v.f == nil || !v.f.Set {
		return ""
	}
	return fmt.Sprint(v.f.Value)
}

func (v *floorValue) Set(s string) error {
	f, err := gate.ParseFloor(s)
	if err != nil {
		if v, perr := strconv.ParseFloat(strings.TrimSpace(s), 64); perr == nil && !math.IsNaN(v) {
			return &valueError{"is outside [0,1]"}
		}
		return &valueError{"is not a number in [0,1] (or none)"}
	}
	*v.f = f
	return nil
}

// inputValueError is the message of an Action input whose value the flag of the
// same name refuses, naming the input and the value in the way of the flag's
// kind: `action input "k": "five" is not an integer`.
func inputValueError(fl *flag.Flag, value string, err error) error {
	phrase := ""
	var ve *valueError
	switch {
	case errors.As(err, &ve):
		phrase = ve.phrase
	case isBoolFlag(fl.Value):
		phrase = "is not a boolean (true or false)"
	default:
		getter, _ := fl.Value.(flag.Getter)
		var g any
		if getter != nil {
			g = getter.Get()
		}
		outOfRange := strings.Contains(err.Error(), "out of range")
		switch g.(type) {
		case int, int64:
			phrase = "is not an integer"
			if outOfRange {
				phrase = "is out of range for an integer"
			}
		case uint, uint64:
			phrase = "is not a non-negative integer"
			if outOfRange {
				phrase = "is out of range for an integer"
			}
		case float64:
			phrase = "is not a number"
		default:
			return usagef("action input %q: %q: %v", fl.Name, publish.Clean(value), err)
		}
	}
	return usagef("action input %q: %q %s", fl.Name, publish.Clean(value), phrase)
}

func isBoolFlag(v flag.Value) bool {
	b, ok := v.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
