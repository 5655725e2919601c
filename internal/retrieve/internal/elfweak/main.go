// Command elfweak marks version requirements of an ELF shared object weak, so that
// the dynamic loader accepts the object on a system whose C library lacks those
// symbol versions (scripts/chroma-local uses it on glibc < 2.39 for Chroma's
// prebuilt Node binding; see README "retrieve"). It edits the file in place and
// only ever touches the flags of the named entries of .gnu.version_r.
//
//	go run ./retrieve/internal/elfweak FILE GLIBC_2.38 GLIBC_2.39
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: elfweak FILE VERSION...")
		os.Exit(2)
	}
	n, err := MarkWeak(os.Args[1], os.Args[2:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "elfweak: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("elfweak: %s: %d version requirement(s) marked weak\n", os.Args[1], n)
}
