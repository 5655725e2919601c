// Package relpath is the one rule by which a file is named relative to a CI
// host's checkout (Rel: GitHub's workspace for annotations and step outputs,
// GitLab's project directory for Code Quality reports), and the one way a
// path's symbolic links are resolved as far as they exist (Resolve: also the
// readers' test of inputs that overlap outputs). It is a leaf: it imports
// nothing of ours, so the forge, the readers and the renderers share it.
package relpath

import (
	"path/filepath"
	"strings"
)

// Rel is path relative to root, with slashes, when path lies within root;
// else path as given, only cleaned (filepath.Clean) and with slashes. So is
// any path when root or path is "", or when the working directory is
// unknown. A relative root or path is taken from the working directory.
//
// Either may be reached through a symbolic link (a runner's /builds as a
// link; a working directory reported resolved): when path as given is not
// within root, both are compared again with the links of their longest
// existing prefix resolved (an output file may not exist yet).
func Rel(root, path string) string {
	clean := filepath.ToSlash(filepath.Clean(path))
	if root == "" || path == "" {
		return clean
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return clean
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return clean
	}
	if rel, ok := within(absRoot, abs); ok {
		return rel
	}
	if rel, ok := within(Resolve(absRoot), Resolve(abs)); ok {
		return rel
	}
	return clean
}

// within is abs relative to root, with slashes, when it lies within root.
func within(root, abs string) (string, bool) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Resolve is the absolute path of p with the symbolic links of its longest
// existing prefix resolved (p cleaned when the working directory is unknown).
func Resolve(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	rest := ""
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
