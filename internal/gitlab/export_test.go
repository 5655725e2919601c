package gitlab

// SetMaxAnswer lowers the answer cap for a test; the returned func restores it.
func SetMaxAnswer(n int64) func() {
	old := maxAnswer
	maxAnswer = n
	return func() { maxAnswer = old }
}
