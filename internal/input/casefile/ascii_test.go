package casefile

import "testing"

// isASCII finds a byte of 0x80 or more wherever it is (in a 32-byte block,
// an 8-byte one or the tail).
func TestIsASCIIEveryPlace(t *testing.T) {
	for n := range 80 {
		buf := make([]byte, n)
		for j := range buf {
			buf[j] = 0x7f
		}
		if !isASCII(buf) {
			t.Fatalf("%d bytes of 0x7f: not ASCII", n)
		}
		for i := range n {
			buf[i] = 0x80
			if isASCII(buf) {
				t.Fatalf("%d bytes, 0x80 at %d: ASCII", n, i)
			}
			buf[i] = 0x7f
		}
	}
}
