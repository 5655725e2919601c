package atomicfile

import "io"

// AddAll adds each output path of a run to s and returns their writers, nil
// for a path that is "" (the output was not asked for). Commands call it
// before reading any input, so that an output that cannot be created fails the
// run before the work; the writers are rendered into at the end (Render) and
// s.Commit publishes them all, or (on any error, through a deferred s.Abort)
// none.
func (s *Set) AddAll(paths ...string) ([]io.Writer, error) {
	ws := make([]io.Writer, len(paths))
	for i, p := range paths {
		if p == "" {
			continue
		}
		w, err := s.Add(p)
		if err != nil {
			return nil, err
		}
		ws[i] = w
	}
	return ws, nil
}

// Render writes each asked-for output (a non-nil writer of AddAll) with the
// renderer at the same index.
func Render(ws []io.Writer, renderers ...func(io.Writer) error) error {
	for i, w := range ws {
		if w == nil {
			continue
		}
		if err := renderers[i](w); err != nil {
			return err
		}
	}
	return nil
}
