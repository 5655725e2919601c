//go:build !amd64

package memory

func dot4(v, a, b, c, d []float32) (float32, float32, float32, float32) {
	return dot4Generic(v, a, b, c, d)
}
