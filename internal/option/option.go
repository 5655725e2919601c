// Package option is the typed refusal of a command's option, so that a domain
// package validates its own Options (Validate) and the CLI names the flag, or
// the Action input, that set the value. It imports nothing of the module.
package option

import (
	"fmt"
	"strings"
)

// Error refuses the option named Option (its flag's name without dashes):
// missing (Required, with Arg the placeholder of its value in the message), a
// value that breaks Rule (a phrase such as "must be at least 1"), or a value
// whose parse failed with Err.
type Error struct {
	Option   string
	Required bool
	Arg      string
	Rule     string
	Err      error
	Parts    []any // Conflict's message
}

func (e *Error) Error() string {
	switch {
	case e.Parts != nil:
		return Message(e.Parts, Ref.String)
	case e.Required:
		return fmt.Sprintf("%s is required", e.Option)
	case e.Err != nil:
		return fmt.Sprintf("%s: %v", e.Option, e.Err)
	}
	return e.Option + " " + e.Rule
}

func (e *Error) Unwrap() error { return e.Err }

// Required is the error of a missing option; arg is its value's placeholder
// ("DIR"), or "".
func Required(name, arg string) error { return &Error{Option: name, Required: true, Arg: arg} }

// Refuse is the error of a value that breaks rule.
func Refuse(name, rule string) error { return &Error{Option: name, Rule: rule} }

// Invalid is the error of a value that could not be read.
func Invalid(name string, err error) error { return &Error{Option: name, Err: err} }

// Ref is an option as a message names it: its flag (or Action input), the
// first given of several (--floor or --floors), with its value (Quote), or,
// with Env, the variable that set it when the option was not given.
type Ref struct {
	Options []string
	Value   string
	Quote   bool
	Env     string
}

// Name refers to the first given of options (the first when none was).
func Name(options ...string) Ref { return Ref{Options: options} }

// Quoted refers to an option with its value: `--store "faiss"`.
func Quoted(name, value string) Ref { return Ref{Options: []string{name}, Value: value, Quote: true} }

// String is the reference as a command line names it.
func (r Ref) String() string {
	if r.Quote {
		return fmt.Sprintf("--%s %q", r.Options[0], r.Value)
	}
	return "--" + r.Options[0]
}

// Conflict is the error of a rule between options (or of one option in its
// context), its message the parts in order: a string as it is, a Ref as the
// caller names that option.
func Conflict(parts ...any) error { return &Error{Parts: parts} }

// Message is the message of parts, each Ref named by name.
func Message(parts []any, name func(Ref) string) string {
	var b strings.Builder
	for _, p := range parts {
		if r, ok := p.(Ref); ok {
			b.WriteString(name(r))
		} else {
			fmt.Fprint(&b, p)
		}
	}
	return b.String()
}
