package importer

import (
	"errors"
	"regexp"
	"regexp/syntax"

	"github.com/retrieval-gate/retrieval-gate/internal/option"
)

// Validate checks import's paths and options; parentRegexp, when given, is
// compiled into o.ParentRegexp.
func (o *Options) Validate(f Files, parentRegexp string) error {
	switch {
	case f.Path == "":
		return option.Required("in", "")
	case f.Out == "":
		return option.Required("out", "")
	case o.ListSep == "":
		return option.Conflict("--list-sep must not be empty")
	case o.ParentSep != "" && parentRegexp != "":
		return option.Conflict("give ", option.Name("parent-from-id"), " or ", option.Name("parent-from-id-regexp"), ", not both")
	case parentRegexp == "":
		return nil
	}
	re, err := regexp.Compile(parentRegexp)
	if err != nil {
		why := "it does not compile"
		var se *syntax.Error
		if errors.As(err, &se) {
			why = string(se.Code)
		}
		return option.Conflict(option.Quoted("parent-from-id-regexp", parentRegexp), " is not a regular expression: "+why)
	}
	o.ParentRegexp = re
	return nil
}
