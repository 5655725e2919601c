#include "textflag.h"

// func dot4AVX2(v, a, b, c, d *float32, n int) (sa, sb, sc, sd float32)
//
// n > 0 and a multiple of 16 (the caller guarantees it; the loop runs at least
// once). Loads are unaligned (VMOVUPS and memory operands of VEX instructions do
// not fault on misalignment). The arithmetic is exactly dot4Portable's, so both
// give bit-identical sums: per query 16 lanes (Y0..Y3 hold elements i+0..7, Y4..Y7
// elements i+8..15), each product rounded to float32 before it is added (VMULPS
// then VADDPS, deliberately no FMA), then lanes l and l+8 added, then lanes l and
// l+4, then (l0+l1)+(l2+l3).
TEXT ·dot4AVX2(SB), NOSPLIT, $0-64
	MOVQ v+0(FP), SI
	MOVQ a+8(FP), AX
	MOVQ b+16(FP), BX
	MOVQ c+24(FP), CX
	MOVQ d+32(FP), DX
	MOVQ n+40(FP), R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ R9, R9

loop:
	VMOVUPS (SI)(R9*4), Y8
	VMOVUPS 32(SI)(R9*4), Y9
	VMULPS (AX)(R9*4), Y8, Y10
	VMULPS 32(AX)(R9*4), Y9, Y11
	VMULPS (BX)(R9*4), Y8, Y12
	VMULPS 32(BX)(R9*4), Y9, Y13
	VADDPS Y10, Y0, Y0
	VADDPS Y11, Y4, Y4
	VADDPS Y12, Y1, Y1
	VADDPS Y13, Y5, Y5
	VMULPS (CX)(R9*4), Y8, Y10
	VMULPS 32(CX)(R9*4), Y9, Y11
	VMULPS (DX)(R9*4), Y8, Y12
	VMULPS 32(DX)(R9*4), Y9, Y13
	VADDPS Y10, Y2, Y2
	VADDPS Y11, Y6, Y6
	VADDPS Y12, Y3, Y3
	VADDPS Y13, Y7, Y7
	ADDQ $16, R9
	CMPQ R9, R8
	JLT loop

	// Lane l += lane l+8.
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3

	// Lane l += lane l+4 (l < 4), then (l0+l1)+(l2+l3) by two horizontal adds.
	VEXTRACTF128 $1, Y0, X8
	VADDPS X8, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VEXTRACTF128 $1, Y1, X8
	VADDPS X8, X1, X1
	VHADDPS X1, X1, X1
	VHADDPS X1, X1, X1
	VEXTRACTF128 $1, Y2, X8
	VADDPS X8, X2, X2
	VHADDPS X2, X2, X2
	VHADDPS X2, X2, X2
	VEXTRACTF128 $1, Y3, X8
	VADDPS X8, X3, X3
	VHADDPS X3, X3, X3
	VHADDPS X3, X3, X3
	VZEROUPPER
	MOVSS X0, sa+48(FP)
	MOVSS X1, sb+52(FP)
	MOVSS X2, sc+56(FP)
	MOVSS X3, sd+60(FP)
	RET
