// Package input holds what every input reader of retrieval-gate shares: the
// input error that names file and line, line helpers (BOM, blank lines, a line
// length cap) and opening and reading files so that a cancelled context
// interrupts even a read from a pipe that never sends. The readers themselves live
// in one package per input family: casefile (cases and knowledge bases),
// trecfile (qrels and runs), labelfile (labels and locks); jsonpos is the JSON
// reader with line numbers for every JSON input but the cases hot path.
package input

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
