// Package option is the typed refusal of a command's option, so that a domain
// package validates its own Options (Validate) and the CLI names the flag, or
// the Action input, that set the value. It imports nothing of the module.
package option

import "fmt"

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
}

func (e *Error) Error() string {
	switch {
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
