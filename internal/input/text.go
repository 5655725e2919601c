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

// CloneStrings returns a copy of ss whose strings share one new allocation:
// what a reader keeps of a record whose strings view the reader's block (see
// casefile.MapOptions.StringsInLine), which is reused after the record.
func CloneStrings(ss []string) []string {
	if ss == nil {
		return nil
	}
	n := 0
	for _, s := range ss {
		n += len(s)
	}
	buf := make([]byte, 0, n)
	for _, s := range ss {
		buf = append(buf, s...)
	}
	all := string(buf)
	out := make([]string, len(ss))
	off := 0
	for i, s := range ss {
		out[i] = all[off : off+len(s)]
		off += len(s)
	}
	return out
}
