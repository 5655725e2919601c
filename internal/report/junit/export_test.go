package junit

// SetMaxBytes lowers the document's bound for a test; the returned func restores it.
func SetMaxBytes(n int) func() {
	old := maxBytes
	maxBytes = n
	return func() { maxBytes = old }
}
