package comparereport

// Diagnosis returns the diagnosis as plain sentences, one per finding, in
// order (names unescaped: the caller escapes for its format).
func (d *Document) Diagnosis() []string {
	out := make([]string, 0, len(d.Findings))
	for _, f := range d.Findings {
		out = append(out, d.finding(f, identity))
	}
	return out
}
