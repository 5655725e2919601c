package cli

import "github.com/retrieval-gate/retrieval-gate/internal/input"

// file is a path a command reads or writes, with the flag that named it.
type file struct{ flag, path string }

func paths(fs []file) []input.Path {
	out := make([]input.Path, len(fs))
	for i, f := range fs {
		out[i] = input.Path{Option: f.flag, Path: f.path}
	}
	return out
}

// refuseOverwrite refuses, before any work, an output that collides with an
// input or another output (input.CheckOverlap: the one rule for every
// command's outputs, reports, caches, histories and baselines alike), naming
// each path's flag, or its Action input, as src gives it.
func refuseOverwrite(cmd string, src *sources, inputs, outputs []file) error {
	o := input.CheckOverlap(paths(inputs), paths(outputs))
	if o == nil {
		return nil
	}
	a, b := o.A, o.B
	switch o.Kind {
	case input.OverwritesInput:
		return usagef("%s: %s would overwrite the input %s (%s)", cmd, src.with(a.Option, a.Path), b.Path, src.name(b.Option))
	case input.InsideInput:
		return usagef("%s: %s is inside the input directory %s (%s); write reports elsewhere", cmd, src.with(a.Option, a.Path), b.Path, src.name(b.Option))
	case input.SameOutput:
		return usagef("%s: %s and %s name the same file %s", cmd, src.name(b.Option), src.name(a.Option), a.Path)
	}
	return usagef("%s: %s is written as a file, but %s needs it as a directory (%s); give them separate paths", cmd, src.with(a.Option, a.Path), src.name(b.Option), b.Path)
}
