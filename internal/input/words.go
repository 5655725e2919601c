package input

// LE64 is the little-endian word of the eight bytes s[i:i+8] (the hashes of
// ids load them a word at a time: check's KB index and its duplicate-id log).
func LE64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// LE32 is the little-endian word of the four bytes s[i:i+4].
func LE32(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}
