package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
)

// verFlgWeak is VER_FLG_WEAK of <elf.h>: the version requirement is optional.
const verFlgWeak = 0x2

// MarkWeak sets VER_FLG_WEAK on every Vernaux entry of path's .gnu.version_r
// section whose version name is in versions, writing the file in place. It returns
// how many entries now carry the flag that did not before.
func MarkWeak(path string, versions []string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := markWeak(data, versions)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if n == 0 {
		return 0, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	tmp := path + ".elfweak-tmp"
	if err := os.WriteFile(tmp, data, st.Mode().Perm()); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	return n, nil
}

// markWeak patches data (a whole ELF file) in memory.
func markWeak(data []byte, versions []string) (int, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	vr := f.Section(".gnu.version_r")
	if vr == nil {
		return 0, fmt.Errorf("no .gnu.version_r section")
	}
	if int(vr.Link) >= len(f.Sections) {
		return 0, fmt.Errorf(".gnu.version_r links to a missing string table")
	}
	strs, err := f.Sections[vr.Link].Data()
	if err != nil {
		return 0, err
	}
	want := map[string]bool{}
	for _, v := range versions {
		want[v] = true
	}
	bo := f.ByteOrder
	// Bounds in uint64 first, so the int conversions below cannot wrap.
	size := uint64(len(data))
	if vr.Offset > size || vr.Size > size-vr.Offset {
		return 0, fmt.Errorf(".gnu.version_r out of file bounds")
	}
	base := int(vr.Offset)     //nolint:gosec // G115: <= len(data), checked above
	end := base + int(vr.Size) //nolint:gosec // G115: base+Size <= len(data), checked above
	str := func(off uint32) string {
		if int(off) >= len(strs) {
			return ""
		}
		s := strs[off:]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		return string(s)
	}
	changed := 0
	// Verneed: vn_version u16, vn_cnt u16, vn_file u32, vn_aux u32, vn_next u32.
	// Vernaux: vna_hash u32, vna_flags u16, vna_other u16, vna_name u32, vna_next u32.
	need := base
	for guard := 0; guard < 1<<16; guard++ {
		if need+16 > end {
			return 0, fmt.Errorf("truncated Verneed entry")
		}
		cnt := int(bo.Uint16(data[need+2:]))
		aux := need + int(bo.Uint32(data[need+8:]))
		for i := 0; i < cnt; i++ {
			if aux+16 > end || aux < base {
				return 0, fmt.Errorf("truncated Vernaux entry")
			}
			flags := bo.Uint16(data[aux+4:])
			if want[str(bo.Uint32(data[aux+8:]))] && flags&verFlgWeak == 0 {
				bo.PutUint16(data[aux+4:], flags|verFlgWeak)
				changed++
			}
			next := bo.Uint32(data[aux+12:])
			if next == 0 {
				break
			}
			aux += int(next)
		}
		next := bo.Uint32(data[need+12:])
		if next == 0 {
			break
		}
		need += int(next)
	}
	return changed, nil
}
