//go:build !linux

package baseline

// mapArena is the heap elsewhere (see arena_linux.go).
func mapArena[T any](n, elem int) (s []T, mem []byte, ok bool) { return nil, nil, false }

func unmapArena(mem []byte) {}
