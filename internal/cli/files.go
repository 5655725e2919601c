package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// file is a path a command reads or writes, with the flag that named it.
type file struct {
	flag, path string
}

// refuseOverwrite is the one rule for every command's outputs, checked before any
// work: no output may name an input (the same path, or the same file through a
// link), an output may not lie inside an input directory (a KB directory: it
// would become a card, or overwrite one), no two outputs may name one file, and
// no output may be a directory another output needs. Every file a command opens
// for writing is an output here: reports, caches (judge --cache), histories and
// baselines.
// "" and "-" (standard input or output) are not files. src names each path's
// flag, or its Action input.
func refuseOverwrite(cmd string, src *sources, inputs, outputs []file) error {
	for i, out := range outputs {
		if out.path == "" || out.path == "-" {
			continue
		}
		for _, in := range inputs {
			if in.path == "" || in.path == "-" {
				continue
			}
			if samePath(out.path, in.path) {
				return usagef("%s: %s would overwrite the input %s (%s)", cmd, src.with(out.flag, out.path), in.path, src.name(in.flag))
			}
			if inside(out.path, in.path) {
				return usagef("%s: %s is inside the input directory %s (%s); write reports elsewhere", cmd, src.with(out.flag, out.path), in.path, src.name(in.flag))
			}
		}
		for _, prev := range outputs[:i] {
			if prev.path == "" || prev.path == "-" {
				continue
			}
			if samePath(prev.path, out.path) {
				return usagef("%s: %s and %s name the same file %s", cmd, src.name(prev.flag), src.name(out.flag), out.path)
			}
			// One output a directory of the other (--write-baseline X with
			// --history X, whose file is X/history.jsonl): one of them would fail
			// after the other was written.
			for _, p := range [][2]file{{prev, out}, {out, prev}} {
				if under(p[1].path, p[0].path) {
					return usagef("%s: %s is written as a file, but %s needs it as a directory (%s); give them separate paths", cmd, src.with(p[0].flag, p[0].path), src.name(p[1].flag), p[1].path)
				}
			}
		}
	}
	return nil
}

// samePath reports whether a and b name one file: the same cleaned path, or an
// existing file reached both ways (links, ./, absolute and relative).
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// inside reports whether path lies under the directory dir (dir itself excluded),
// with symbolic links in either resolved as far as they exist.
func inside(path, dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	d, p := resolve(dir), resolve(path)
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// under reports whether path lies below dir whether or not dir exists, with the
// symbolic links of both resolved as far as they exist.
func under(path, dir string) bool {
	rel, err := filepath.Rel(resolve(dir), resolve(path))
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolve is the absolute path of p with the symbolic links of its longest
// existing prefix resolved.
func resolve(p string) string {
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
