package comparereport

// Diagnosis returns the diagnosis as plain sentences, one per finding the
// scenarios do not already state, in order (names unescaped: the caller escapes for its format).
func (d *Document) Diagnosis() []string {
	fs := d.diagnosis()
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, d.finding(f, identity))
	}
	return out
}
