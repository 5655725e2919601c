package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/option"
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
			return usagef("action input %q: %q: %v", fl.Name, format.Clean(value), err)
		}
	}
	return usagef("action input %q: %q %s", fl.Name, format.Clean(value), phrase)
}

func isBoolFlag(v flag.Value) bool {
	b, ok := v.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// sources says where the parsed flags of one command got their values: the
// command line (or the flag's own default), or an Action input (INPUT_<NAME>, or
// the Actions default of a declared input, see actionInputs). Every message about
// a value refused after parsing names it through sources, so a value from the
// command line is named by its flag (`--k`) and one from an Action input by the
// input, with the value as given (`action input "k": "0"`), as parseFlags names
// the values it refuses itself (inputValueError).
type sources struct {
	fs       *flag.FlagSet
	inputs   map[string]string // flag name -> the input's value, for the flags set from an input
	defaults map[string]bool   // the flags of inputs set to the Action's default (none given)
	stdin    io.Reader         // the command's standard input (an input "-")
}

// defaulted notes that flag n took the Action's default for its input.
func (s *sources) defaulted(n string) {
	if s.defaults == nil {
		s.defaults = map[string]bool{}
	}
	s.defaults[n] = true
}

// unset drops the Action's default of flag n, when n took it: the default
// does not apply (judge's json with batch-out, which writes the requests
// alone). It reports whether it did.
func (s *sources) unset(n string) bool {
	if s == nil || !s.defaults[n] {
		return false
	}
	delete(s.defaults, n)
	delete(s.inputs, n)
	return true
}

// name is how a message names flag n: `action input "n"` when its value came
// from an Action input, else `--n`.
func (s *sources) name(n string) string {
	if s == nil {
		return "--" + n
	}
	if _, ok := s.inputs[n]; ok {
		return fmt.Sprintf("action input %q", n)
	}
	return "--" + n
}

// refuse is the usage error of command cmd for flag n's value, which breaks
// rule (a phrase such as "must be at least 1"):
//
//	check: --k must be at least 1, got 0
//	check: action input "k": "0" must be at least 1
func (s *sources) refuse(cmd, n, rule string) error {
	if v, ok := s.input(n); ok {
		return usagef("%s: action input %q: %q %s", cmd, n, format.Clean(v), rule)
	}
	return usagef("%s: --%s %s, got %s", cmd, n, rule, s.shown(n))
}

// refuseErr is the usage error of command cmd for flag n's value, refused by err:
//
//	judge: --price-per-1k: want PRICE or ..., got "x"
//	judge: action input "price-per-1k": want PRICE or ..., got "x"
//
// The input's value is shown unless err already quotes it.
func (s *sources) refuseErr(cmd, n string, err error) error {
	v, ok := s.input(n)
	if !ok {
		return usagef("%s: --%s: %v", cmd, n, err)
	}
	if q := fmt.Sprintf("%q", format.Clean(v)); !strings.Contains(err.Error(), q) {
		return usagef("%s: action input %q: %s: %v", cmd, n, q, err)
	}
	return usagef("%s: action input %q: %v", cmd, n, err)
}

// option is err of a domain package's Validate, an *option.Error, as a usage
// error of command cmd naming the flag (or Action input) as src gives it; any
// other error is returned as it is.
func (s *sources) option(cmd string, err error) error {
	var oe *option.Error
	switch {
	case !errors.As(err, &oe):
		return err
	case oe.Parts != nil:
		return usagef("%s: %s", cmd, option.Message(oe.Parts, s.ref))
	case oe.Required && oe.Arg != "":
		return usagef("%s: --%s %s is required", cmd, oe.Option, oe.Arg)
	case oe.Required:
		return usagef("%s: --%s is required", cmd, oe.Option)
	case oe.Err != nil:
		return s.refuseErr(cmd, oe.Option, oe.Err)
	}
	return s.refuse(cmd, oe.Option, oe.Rule)
}

// ref names an option of a Conflict: the first given of its flags (or
// inputs; else the first), with its value when quoted, or its variable when it
// set the value.
func (s *sources) ref(r option.Ref) string {
	switch {
	case r.Env != "" && !s.given(r.Options[0]):
		return "$" + r.Env
	case r.Quote:
		return s.quoted(r.Options[0], r.Value)
	}
	for _, n := range r.Options { // a value several flags add to (--floor and --floors)
		if s.given(n) {
			return s.name(n)
		}
	}
	return s.name(r.Options[0])
}

// with is flag n and its value v as a message's subject: `--json out.json`, or
// `action input "json": "out.json"`.
func (s *sources) with(n, v string) string {
	if _, ok := s.input(n); ok {
		return fmt.Sprintf("action input %q: %q", n, format.Clean(v))
	}
	return "--" + n + " " + v
}

// quoted is with, the value quoted also after a flag: `--gate-strategy "prod"`.
func (s *sources) quoted(n, v string) string {
	if _, ok := s.input(n); ok {
		return s.with(n, v)
	}
	return fmt.Sprintf("--%s %q", n, format.Clean(v))
}

// input is the value of flag n when it came from an Action input.
func (s *sources) input(n string) (string, bool) {
	if s == nil {
		return "", false
	}
	v, ok := s.inputs[n]
	return v, ok
}

// shown is flag n's value as a message shows it: quoted when it is text.
func (s *sources) shown(n string) string {
	if s == nil {
		return ""
	}
	fl := s.fs.Lookup(n)
	if fl == nil {
		return ""
	}
	if g, ok := fl.Value.(flag.Getter); ok {
		switch v := g.Get().(type) {
		case string:
			return fmt.Sprintf("%q", format.Clean(v))
		case bool, int, int64, uint, uint64, float64:
			return fmt.Sprint(v)
		}
	}
	return fmt.Sprintf("%q", format.Clean(fl.Value.String()))
}

// registerLLM adds the flags of a chat server (role judge or generator) bound
// to s; their defaults are s's values. beyond says what becomes of the work
// past --max-requests.
func registerLLM(fs *flag.FlagSet, s *llm.Server, role, beyond string) {
	fs.StringVar(&s.URL, role+"-url", "", "OpenAI-compatible chat server `URL`: a base (http://host:8000), .../v1 or .../v1/chat/completions (required)")
	fs.StringVar(&s.Model, role+"-model", "", "model name sent to the server (required for api.openai.com; llama-server ignores it)")
	fs.IntVar(&s.Concurrency, "concurrency", s.Concurrency, "requests in flight at once")
	fs.Int64Var(&s.MaxRequests, "max-requests", 0, "total budget of chat requests (0: no limit); "+beyond)
}

// namedFile is a run file of judge or compare: NAME=FILE.
type namedFile = struct{ Name, Path string }

// runFlag collects repeated --run NAME=FILE into runs (an Action input may
// hold several, one per line).
type runFlag[T ~namedFile] struct{ runs *[]T }

func (f runFlag[T]) String() string {
	if f.runs == nil {
		return ""
	}
	names := make([]string, len(*f.runs))
	for i, r := range *f.runs {
		names[i] = namedFile(r).Name
	}
	return strings.Join(names, ",")
}

func (f runFlag[T]) Set(v string) error {
	for _, item := range strings.Split(v, "\n") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, file, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		file = strings.TrimSpace(file)
		if !ok || name == "" || file == "" {
			return fmt.Errorf("want NAME=FILE, got %q", item)
		}
		if name == compare.NoClearWinner {
			return fmt.Errorf("%q is reserved for the recommendation; pick another name", name)
		}
		for _, r := range *f.runs {
			if r := namedFile(r); r.Name == name {
				return fmt.Errorf("duplicate strategy name %q (files %s and %s)", name, r.Path, file)
			}
		}
		*f.runs = append(*f.runs, T{Name: name, Path: file})
	}
	return nil
}

// floorFlag collects --floor MEASURE[@GROUP]=F (repeatable) and --floors (the
// `floors` Action input: one expression per line) into one list; a second floor
// on the same measure and group is refused.
type floorFlag struct {
	grammar floor.Grammar
	list    *floor.List
}

func (f *floorFlag) String() string {
	if f == nil || f.list == nil {
		return ""
	}
	s := make([]string, len(*f.list))
	for i, x := range *f.list {
		s[i] = x.String()
	}
	return strings.Join(s, "\n")
}

func (f *floorFlag) Set(v string) error { return f.grammar.AddLines(f.list, v) }
