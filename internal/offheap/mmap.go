//go:build linux || darwin || freebsd

package offheap

import "syscall"

func mapBytes(n int, populate bool) ([]byte, bool) {
	flags := syscall.MAP_ANON | syscall.MAP_PRIVATE
	if populate {
		flags |= mapPopulate
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, flags)
	if err != nil {
		return nil, false
	}
	return b, true
}

func unmapBytes(b []byte) { _ = syscall.Munmap(b) }
