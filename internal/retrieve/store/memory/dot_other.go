//go:build !amd64

package memory

// useAVX2 is always false off amd64: there is no kernel, only dot4Portable.
var useAVX2 = false

func dot4(v, a, b, c, d []float32) (float32, float32, float32, float32) {
	return dot4Portable(v, a, b, c, d)
}
