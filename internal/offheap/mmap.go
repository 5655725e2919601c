//go:build linux || darwin || freebsd

package offheap

import "syscall"

func mapBytes(n int) ([]byte, bool) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	return b, true
}

func unmapBytes(b []byte) { _ = syscall.Munmap(b) }
