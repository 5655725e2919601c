package input

import "bytes"

// BOM is the UTF-8 byte order mark. Every reader drops it at the start of a file
// (editors on Windows write it).
var BOM = []byte{0xEF, 0xBB, 0xBF}

// TrimBOM drops a UTF-8 BOM at the start of b.
func TrimBOM(b []byte) []byte { return bytes.TrimPrefix(b, BOM) }

// IsBlank reports whether b holds only spaces, tabs and carriage returns: a
// blank line, which line-oriented readers skip.
func IsBlank(b []byte) bool {
	for _, ch := range b {
		if ch != ' ' && ch != '\t' && ch != '\r' {
			return false
		}
	}
	return true
}
