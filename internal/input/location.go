package input

import (
	"errors"
	"regexp"
	"strconv"
)

// Location is the file and line an error names: from an *Error (importer.Error
// is the same type) wherever it is in the chain, else from a "FILE:LINE: " in
// the message (errors formatted by other packages). Line 0 is the whole file;
// "" is no file.
func Location(err error) (file string, line int) {
	var de *Error
	if errors.As(err, &de) {
		return de.File, de.Line
	}
	if m := fileLine.FindStringSubmatch(err.Error()); m != nil {
		if n, e := strconv.Atoi(m[2]); e == nil && n > 0 {
			return m[1], n
		}
	}
	return "", 0
}

// fileLine is "FILE:LINE: " at the start of a message or after a ": ", where
// FILE has no spaces or colons (a Windows drive letter aside) and LINE is a
// positive number.
var fileLine = regexp.MustCompile(`(?:^|: )((?:[A-Za-z]:)?[^\s:"]+):([1-9][0-9]{0,9}): `)
