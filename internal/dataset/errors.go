// Package dataset reads the inputs of retrieval-gate: evaluation cases, knowledge
// bases, TREC qrels and runs, human and judge labels. Every error names file and line.
package dataset

import "fmt"

// Error is an input error at a place in a file. Line is 1-based; 0 means the
// whole file.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Errorf builds an *Error.
func Errorf(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}
