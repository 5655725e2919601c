//go:build !unix

package browsertest

import "os/exec"

// ownGroup does nothing where there are no process groups: the package
// builds (go vet ./... and go build ./... on every port), but Chromium's
// DevTools pipe needs file descriptors 3 and 4 (cmd.ExtraFiles), which
// os/exec supports only on Unix, so Launch fails to start it there.
func ownGroup(*exec.Cmd) {}

// killGroup kills the browser's own process.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
