package input

import "github.com/parquet-go/parquet-go"

// SetMaxParquetPageValues sets the cap of a page's values for a test and
// returns a function that restores it.
func SetMaxParquetPageValues(n int32) func() {
	old := maxParquetPageValues
	maxParquetPageValues = n
	return func() { maxParquetPageValues = old }
}

// SetMaxParquetRow sets the cap of a row ParquetRows reads for a test and
// returns a function that restores it.
func SetMaxParquetRow(n int) func() {
	old := maxParquetRow
	maxParquetRow = n
	return func() { maxParquetRow = old }
}

// MaxParquetFooterElements is the cap of a footer's list elements together.
const MaxParquetFooterElements = maxParquetFooterElements

// ReadRowsAtOnce is how many rows of g the line reader reads at a time.
func ReadRowsAtOnce(g parquet.RowGroup, limit int) int { return readRowsAtOnce(g, limit) }
