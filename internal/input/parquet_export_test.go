package input

// SetMaxParquetPageValues sets the cap of a page's values for a test and
// returns a function that restores it.
func SetMaxParquetPageValues(n int32) func() {
	old := maxParquetPageValues
	maxParquetPageValues = n
	return func() { maxParquetPageValues = old }
}
