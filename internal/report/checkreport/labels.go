package checkreport

// TestLabel is a paired test's short name as the reports show it ("McNemar",
// "sign-flip", "sign-flip MC"); the test's id when it has none.
func TestLabel(test string) string {
	if l, ok := testLabels[test]; ok {
		return l
	}
	return test
}

// PairedKeys are the registered measures a paired group has, in registry order
// (the rows of the "vs base" tables of every report).
func PairedKeys(g PairedGroup) []string { return pairedKeys(g) }
