package gitlab

// SetMaxAnswer lowers the answer cap for a test; the returned func restores it.
func SetMaxAnswer(n int64) func() {
	old := maxAnswer
	maxAnswer = n
	return func() { maxAnswer = old }
}

// SetMaxPages lowers the listing's page bound for a test; the returned func restores it.
func SetMaxPages(n int) func() {
	old := maxPages
	maxPages = n
	return func() { maxPages = old }
}
