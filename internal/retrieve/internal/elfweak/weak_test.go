package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// needs returns each required version name with its weak flag.
func needs(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	vn, err := f.DynamicVersionNeeds()
	require.NoError(t, err)
	out := map[string]bool{}
	for _, n := range vn {
		for _, d := range n.Needs {
			out[d.Dep] = d.Flags&elf.VER_FLG_WEAK != 0
		}
	}
	return out
}

func TestMarkWeak(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not available to build a test shared object")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "x.c")
	require.NoError(t, os.WriteFile(src, []byte("#include <stdio.h>\n#include <stdlib.h>\nint f(const char *s) { printf(\"%s\", s); return (int)strtol(s, 0, 10); }\n"), 0o644))
	so := filepath.Join(dir, "x.so")
	out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", so, src).CombinedOutput()
	require.NoError(t, err, string(out))

	before := needs(t, so)
	require.Contains(t, before, "GLIBC_2.2.5")
	require.False(t, before["GLIBC_2.2.5"])

	n, err := MarkWeak(so, []string{"GLIBC_2.2.5", "GLIBC_9.99"})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	after := needs(t, so)
	assert.True(t, after["GLIBC_2.2.5"], "marked weak")
	for name, weak := range after {
		if name != "GLIBC_2.2.5" {
			assert.Equal(t, before[name], weak, name)
		}
	}
	// Idempotent, and the file still loads as ELF.
	n, err = MarkWeak(so, []string{"GLIBC_2.2.5"})
	require.NoError(t, err)
	assert.Zero(t, n)

	_, err = MarkWeak(src, []string{"GLIBC_2.2.5"})
	assert.Error(t, err, "not an ELF file")
}
