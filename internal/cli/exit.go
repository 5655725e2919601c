package cli

import (
	"errors"
	"fmt"
)

// Exit codes of the contract. This file is the only place errors become exit codes.
const (
	ExitOK         = 0 // every active gate passed
	ExitGateFailed = 1 // a gate failed; all reports were still written
	ExitInput      = 2 // usage or input error
)

// GateError reports that at least one gate failed. Reports have been written.
type GateError struct {
	Failed []string // names of the failed gates
}

func (e *GateError) Error() string {
	return fmt.Sprintf("gate failed: %v", e.Failed)
}

// gateError is a *GateError for the failed gates, nil when none failed.
func gateError(failed []string) error {
	if len(failed) == 0 {
		return nil
	}
	return &GateError{Failed: failed}
}

// UsageError is a bad command line (unknown flag, missing required flag, value out of range).
type UsageError struct {
	Msg string
	// Usage, when set, is the command's short usage, printed on stderr
	// under the message.
	Usage string
}

func (e *UsageError) Error() string { return e.Msg }

// usagef builds a UsageError.
func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ExitCode maps an error returned by a command to the process exit code.
// nil is success, a *GateError is 1, everything else (usage, input, I/O) is 2.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ge *GateError
	if errors.As(err, &ge) {
		return ExitGateFailed
	}
	return ExitInput
}
