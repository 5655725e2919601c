#include "textflag.h"

// func prefetchSlots(base unsafe.Pointer, idx []uint64)
TEXT ·prefetchSlots(SB), NOSPLIT|NOFRAME, $0-32
	MOVQ base+0(FP), AX
	MOVQ idx_base+8(FP), BX
	MOVQ idx_len+16(FP), CX
	TESTQ CX, CX
	JZ done
loop:
	MOVQ (BX), DX
	SHLQ $4, DX
	PREFETCHT0 (AX)(DX*1)
	ADDQ $8, BX
	DECQ CX
	JNZ loop
done:
	RET
