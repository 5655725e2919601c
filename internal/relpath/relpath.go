// Package relpath is the one rule by which a file is named relative to a CI
// host's checkout: GitHub's workspace for annotations and step outputs,
// GitLab's project directory for Code Quality reports. It is a leaf: it
// imports nothing of ours, so the forge and the renderers share it.
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
	if rel, ok := within(resolved(absRoot), resolved(abs)); ok {
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

// resolved is p (absolute) with the symbolic links of its longest existing
// prefix resolved.
func resolved(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
