//go:build !unix

// Package filelock takes an exclusive advisory lock on an open file: the
// history's and the judge cache's appends and the end-to-end tests' shared
// binary wait on it.
package filelock

import (
	"context"
	"os"
)

// Lock does not lock where there is no flock: its callers stay correct
// without it (the history's and the judge cache's O_APPEND and single write
// keep records whole; two
// end-to-end packages each rename a complete binary into place).
func Lock(context.Context, *os.File) (unlock func(), err error) { return func() {}, nil }
