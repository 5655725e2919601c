package gate

import (
	"errors"
	"regexp"

	"github.com/retrieval-gate/retrieval-gate/internal/option"
)

// fieldOf is the LiveOptions field of each retrieve flag: an option refused by
// the resolution the CLI shares (retrieve's Resolve) is named here by the field
// that set it, as the CLI names it by its flag.
var fieldOf = map[string]string{
	"strategy": "Strategy", "k": "Retrieve", "store": "Store", "chroma-url": "StoreURL", "collection": "Collection",
	"chroma-tenant": "StoreTenant", "chroma-database": "StoreDatabase", "chroma-api-key": "StoreAPIKey",
	"chroma-token-header": "StoreTokenHeader", "chroma-create-database": "CreateDatabase",
	"embedder": "Embedder", "embedder-url": "EmbedderURL", "embedder-model": "EmbedderModel",
}

// flagWord is a flag as a message of the shared code writes it.
var flagWord = regexp.MustCompile(`--[a-z][a-z-]*[a-z]`)

// field names an option by its LiveOptions field (the flag's name when it has
// none).
func field(name string) string {
	if f, ok := fieldOf[name]; ok {
		return "LiveOptions." + f
	}
	return "--" + name
}

// optionError words a refused option of the retrieval as the library's: each
// option by its LiveOptions field (a flag a message names, too), prefixed
// "gate: ". Any other error is returned as it is.
func optionError(err error) error {
	var oe *option.Error
	if !errors.As(err, &oe) {
		return err
	}
	var msg string
	switch {
	case oe.Parts != nil:
		msg = option.Message(oe.Parts, func(r option.Ref) string {
			s := field(r.Options[0])
			if r.Quote {
				s += " " + `"` + r.Value + `"`
			}
			return s
		})
	case oe.Required:
		msg = field(oe.Option) + " is required"
	case oe.Err != nil:
		msg = field(oe.Option) + ": " + oe.Err.Error()
	default:
		msg = field(oe.Option) + " " + oe.Rule
	}
	msg = flagWord.ReplaceAllStringFunc(msg, func(w string) string {
		if _, ok := fieldOf[w[2:]]; ok {
			return field(w[2:])
		}
		return w
	})
	return &libraryError{msg: "gate: " + msg, err: err}
}

// libraryError is a refused option worded for the library; it unwraps to the
// *option.Error.
type libraryError struct {
	msg string
	err error
}

func (e *libraryError) Error() string { return e.msg }
func (e *libraryError) Unwrap() error { return e.err }
