package input

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/relpath"
)

// Path is a path a command reads or writes, with the option (flag) that named it.
type Path struct {
	Option, Path string
	// Open is, for an input read from an open file rather than its path
	// (standard input, "-", redirected from a file), that file: an output
	// that names it collides with the input as a path would.
	Open fs.FileInfo
}

// OverlapKind says how an output collides with another path.
type OverlapKind int

const (
	OverwritesInput  OverlapKind = iota + 1 // the output is the input B (the same path, or one file through a link)
	InsideInput                             // the output lies inside the input directory B
	SameOutput                              // B, an earlier output, is the same file
	FileAndDirectory                        // A is written as a file, but the output B needs it as a directory
	MatchesPattern                          // the output would be a shard of the input B, a glob pattern
)

// Overlap is a collision of output A with path B.
type Overlap struct {
	Kind OverlapKind
	A, B Path
}

// CheckOverlap is the one rule for every command's outputs, checked before
// any work: no output may name an input (the same path, or the same file
// through a link), an output may not lie inside an input directory (a KB
// directory: it would become a card, or overwrite one), no two outputs may
// name one file, and no output may be a directory another output needs.
// "" and "-" (standard input or output) are not paths; an input read from
// standard input redirected from a file is that file (Path.Open). It returns
// the first collision, nil when there is none.
func CheckOverlap(inputs, outputs []Path) *Overlap {
	for i, out := range outputs {
		if out.Path == "" || out.Path == "-" {
			continue
		}
		for _, in := range inputs {
			if in.Path == "" || in.Path == "-" {
				if in.Open != nil && isFile(out.Path, in.Open) {
					return &Overlap{OverwritesInput, out, in}
				}
				continue
			}
			if samePath(out.Path, in.Path) {
				return &Overlap{OverwritesInput, out, in}
			}
			if inside(out.Path, in.Path) {
				return &Overlap{InsideInput, out, in}
			}
			if matches(out.Path, in.Path) {
				return &Overlap{MatchesPattern, out, in}
			}
		}
		for _, prev := range outputs[:i] {
			if prev.Path == "" || prev.Path == "-" {
				continue
			}
			if samePath(prev.Path, out.Path) {
				return &Overlap{SameOutput, out, prev}
			}
			// One output a directory of the other (--write-baseline X with
			// --history X, whose file is X/history.jsonl): one of them would fail
			// after the other was written.
			for _, p := range [][2]Path{{prev, out}, {out, prev}} {
				if under(p[1].Path, p[0].Path) {
					return &Overlap{FileAndDirectory, p[0], p[1]}
				}
			}
		}
	}
	return nil
}

// matches reports whether path, written, would be one of the shards of the
// glob pattern (IsPattern) an input names: it would be read as one by the
// next run (ExpandShards' rule for hidden names included).
func matches(path, pattern string) bool {
	if !IsPattern(pattern) {
		return false
	}
	if hiddenShard(filepath.Base(path)) && !hiddenShard(filepath.Base(pattern)) {
		return false
	}
	for _, p := range [][2]string{{pattern, path}, {abs(pattern), abs(path)}, {abs(pattern), relpath.Resolve(path)}} {
		if ok, err := filepath.Match(p[0], p[1]); err == nil && ok {
			return true
		}
	}
	return false
}

// abs is the absolute path of p, p cleaned when it has none.
func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// isFile reports whether path names the file of info.
func isFile(path string, info fs.FileInfo) bool {
	st, err := os.Stat(path)
	return err == nil && os.SameFile(st, info)
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
	return under(path, dir)
}

// under reports whether path lies below dir whether or not dir exists, with the
// symbolic links of both resolved as far as they exist.
func under(path, dir string) bool {
	rel, err := filepath.Rel(relpath.Resolve(dir), relpath.Resolve(path))
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
