package gitlab

// SetNoteCap lowers the cap of one note for a test; the returned func restores it.
func SetNoteCap(n int64) func() {
	old := noteCap
	noteCap = n
	return func() { noteCap = old }
}

// SetMaxPages lowers the listing's page bound for a test; the returned func restores it.
func SetMaxPages(n int) func() {
	old := maxPages
	maxPages = n
	return func() { maxPages = old }
}
