//go:build amd64 && !purego

#include "textflag.h"

// func rowAVX64(o, nsz, z, diag, e []float64, K, P int, nt bool)
//
// One row of the second channel, as rowT: block (a,b) is o[(a·K+b)·P+c] = f·(e[a·P+c] +
// e[b·P+c]) with f = nsz[b]·z[a] for b < a, diag[a] for b = a and nsz[a]·z[b] for b > a,
// four lanes at a time, then one. With nt, the vector stores are non-temporal (the caller
// guarantees that o and P·8 are multiples of 32 bytes).
TEXT ·rowAVX64(SB), NOSPLIT, $0-137
	MOVQ    o_base+0(FP), DI
	MOVQ    nsz_base+24(FP), SI
	MOVQ    z_base+48(FP), DX
	MOVQ    diag_base+72(FP), R14
	MOVQ    e_base+96(FP), AX
	MOVQ    P+128(FP), R10
	MOVBLZX nt+136(FP), R12
	MOVQ    R10, R13
	ANDQ    $-4, R13
	MOVQ    AX, R9             // e[a]
	XORQ    BX, BX             // a

loop_a:
	CMPQ BX, K+120(FP)
	JAE  done
	MOVQ AX, R11               // e[b]
	XORQ R8, R8                // b

lower: // b < a: nsz[b]·z[a]
	CMPQ   R8, BX
	JAE    diag
	VMOVSD (SI)(R8*8), X0
	VMULSD (DX)(BX*8), X0, X0
lo:
	VBROADCASTSD X0, Y0
	XORQ  CX, CX
	TESTQ R13, R13
	JZ    lo_tail
	TESTQ R12, R12
	JNZ   lo_nt

lo_vec:
	VMOVUPD (R9)(CX*8), Y1
	VADDPD (R11)(CX*8), Y1, Y1
	VMULPD Y0, Y1, Y1
	VMOVUPD Y1, (DI)(CX*8)
	ADDQ $4, CX
	CMPQ CX, R13
	JB   lo_vec
	JMP  lo_tail

lo_nt:
	LEAQ 8(CX), R15
	CMPQ R15, R13
	JA   lo_nt4
	VMOVUPD (R9)(CX*8), Y1
	VMOVUPD 32(R9)(CX*8), Y2
	VADDPD (R11)(CX*8), Y1, Y1
	VADDPD 32(R11)(CX*8), Y2, Y2
	VMULPD Y0, Y1, Y1
	VMULPD Y0, Y2, Y2
	VMOVNTPD Y1, (DI)(CX*8)
	VMOVNTPD Y2, 32(DI)(CX*8)
	MOVQ R15, CX
	CMPQ CX, R13
	JB   lo_nt
	JMP  lo_tail

lo_nt4:
	VMOVUPD (R9)(CX*8), Y1
	VADDPD (R11)(CX*8), Y1, Y1
	VMULPD Y0, Y1, Y1
	VMOVNTPD Y1, (DI)(CX*8)
	ADDQ $4, CX
	CMPQ CX, R13
	JB   lo_nt4

lo_tail:
	CMPQ CX, R10
	JAE  lo_next
	VMOVSD (R9)(CX*8), X1
	VADDSD (R11)(CX*8), X1, X1
	VMULSD X0, X1, X1
	VMOVSD X1, (DI)(CX*8)
	INCQ CX
	JMP  lo_tail

lo_next:
	LEAQ (DI)(R10*8), DI
	LEAQ (R11)(R10*8), R11
	INCQ R8
	JMP lower

diag:
	VMOVSD (R14)(BX*8), X0
dg:
	VBROADCASTSD X0, Y0
	XORQ  CX, CX
	TESTQ R13, R13
	JZ    dg_tail
	TESTQ R12, R12
	JNZ   dg_nt

dg_vec:
	VMOVUPD (R9)(CX*8), Y1
	VADDPD (R11)(CX*8), Y1, Y1
	VMULPD Y0, Y1, Y1
	VMOVUPD Y1, (DI)(CX*8)
	ADDQ $4, CX
	CMPQ CX, R13
	JB   dg_vec
	JMP  dg_tail

dg_nt:
	LEAQ 8(CX), R15
	CMPQ R15, R13
	JA   dg_nt4
	VMOVUPD (R9)(CX*8), Y1
	VMOVUPD 32(R9)(CX*8), Y2
	VADDPD (R11)(CX*8), Y1, Y1
	VADDPD 32(R11)(CX*8), Y2, Y2
	VMULPD Y0, Y1, Y1
	VMULPD Y0, Y2, Y2
	VMOVNTPD Y1, (DI)(CX*8)
	VMOVNTPD Y2, 32(DI)(CX*8)
	MOVQ R15, CX
	CMPQ CX, R13
	JB   dg_nt
	JMP  dg_tail

dg_nt4:
	VMOVUPD (R9)(CX*8), Y1
	VADDPD (R11)(CX*8), Y1, Y1
	VMULPD Y0, Y1, Y1
	VMOVNTPD Y1, (DI)(CX*8)
	ADDQ $4, CX
	CMPQ CX, R13
	JB   dg_nt4

dg_tail:
	CMPQ CX, R10
	JAE  dg_next
	VMOVSD (R9)(CX*8), X1
	VADDSD (R11)(CX*8), X1, X1
	VMULSD X0, X1, X1
	VMOVSD X1, (DI)(CX*8)
	INCQ CX
	JMP  dg_tail

dg_next:
	LEAQ (DI)(R10*8), DI
	LEAQ (R11)(R10*8), R11
	INCQ R8

upper: // b > a: nsz[a]·z[b]
	CMPQ   R8, K+120(FP)
	JAE    next_a
	VMOVSD (SI)(BX*8), X0
	VMULSD (DX)(R8*8), X0, X0
up:
	VBROADCASTSD X0, Y0
	XORQ  CX, CX
	TESTQ R13, R13
	JZ    up_tail
	TESTQ R12, R12
	JNZ   up_nt

up_vec:
	VMOVUPD (R9)(CX*8), Y1
	VADDPD (R11)(CX*8), Y1, Y1
	VMULPD Y0, Y1, Y1
	VMOVUPD Y1, (DI)(CX*8)
	ADDQ $4, CX
	CMPQ CX, R13
	JB   up_vec
	JMP  up_tail

up_nt:
	LEAQ 8(CX), R15
	CMPQ R15, R13
	JA   up_nt4
	VMOVUPD (R9)(CX*8), Y1
	VMOVUPD 32(R9)(CX*8), Y2
	VADDPD (R11)(CX*8), Y1, Y1
	VADDPD 32(R11)(CX*8), Y2, Y2
	VMULPD Y0, Y1, Y1
	VMULPD Y0, Y2, Y2
	VMOVNTPD Y1, (DI)(CX*8)
	VMOVNTPD Y2, 32(DI)(CX*8)
	MOVQ R15, CX
	CMPQ CX, R13
	JB   up_nt
	JMP  up_tail

up_nt4:
	VMOVUPD (R9)(CX*8), Y1
	VADDPD (R11)(CX*8), Y1, Y1
	VMULPD Y0, Y1, Y1
	VMOVNTPD Y1, (DI)(CX*8)
	ADDQ $4, CX
	CMPQ CX, R13
	JB   up_nt4

up_tail:
	CMPQ CX, R10
	JAE  up_next
	VMOVSD (R9)(CX*8), X1
	VADDSD (R11)(CX*8), X1, X1
	VMULSD X0, X1, X1
	VMOVSD X1, (DI)(CX*8)
	INCQ CX
	JMP  up_tail

up_next:
	LEAQ (DI)(R10*8), DI
	LEAQ (R11)(R10*8), R11
	INCQ R8
	JMP upper

next_a:
	LEAQ (R9)(R10*8), R9
	INCQ BX
	JMP  loop_a

done:
	VZEROUPPER
	RET

// func rowAVX32(o []float32, nsz, z, diag []float64, e []float32, K, P int, nt bool)
//
// rowAVX64 for float32: the coefficient is computed in float64 and rounded to float32, the
// block in float32, eight lanes at a time (P·4 a multiple of 32 bytes for nt).
TEXT ·rowAVX32(SB), NOSPLIT, $0-137
	MOVQ    o_base+0(FP), DI
	MOVQ    nsz_base+24(FP), SI
	MOVQ    z_base+48(FP), DX
	MOVQ    diag_base+72(FP), R14
	MOVQ    e_base+96(FP), AX
	MOVQ    P+128(FP), R10
	MOVBLZX nt+136(FP), R12
	MOVQ    R10, R13
	ANDQ    $-8, R13
	MOVQ    AX, R9             // e[a]
	XORQ    BX, BX             // a

loop_a:
	CMPQ BX, K+120(FP)
	JAE  done
	MOVQ AX, R11               // e[b]
	XORQ R8, R8                // b

lower: // b < a: nsz[b]·z[a]
	CMPQ   R8, BX
	JAE    diag
	VMOVSD (SI)(R8*8), X0
	VMULSD (DX)(BX*8), X0, X0
lo:
	VCVTSD2SS X0, X0, X0
	VBROADCASTSS X0, Y0
	XORQ  CX, CX
	TESTQ R13, R13
	JZ    lo_tail
	TESTQ R12, R12
	JNZ   lo_nt

lo_vec:
	VMOVUPS (R9)(CX*4), Y1
	VADDPS (R11)(CX*4), Y1, Y1
	VMULPS Y0, Y1, Y1
	VMOVUPS Y1, (DI)(CX*4)
	ADDQ $8, CX
	CMPQ CX, R13
	JB   lo_vec
	JMP  lo_tail

lo_nt:
	VMOVUPS (R9)(CX*4), Y1
	VADDPS (R11)(CX*4), Y1, Y1
	VMULPS Y0, Y1, Y1
	VMOVNTPS Y1, (DI)(CX*4)
	ADDQ $8, CX
	CMPQ CX, R13
	JB   lo_nt

lo_tail:
	CMPQ CX, R10
	JAE  lo_next
	VMOVSS (R9)(CX*4), X1
	VADDSS (R11)(CX*4), X1, X1
	VMULSS X0, X1, X1
	VMOVSS X1, (DI)(CX*4)
	INCQ CX
	JMP  lo_tail

lo_next:
	LEAQ (DI)(R10*4), DI
	LEAQ (R11)(R10*4), R11
	INCQ R8
	JMP lower

diag:
	VMOVSD (R14)(BX*8), X0
dg:
	VCVTSD2SS X0, X0, X0
	VBROADCASTSS X0, Y0
	XORQ  CX, CX
	TESTQ R13, R13
	JZ    dg_tail
	TESTQ R12, R12
	JNZ   dg_nt

dg_vec:
	VMOVUPS (R9)(CX*4), Y1
	VADDPS (R11)(CX*4), Y1, Y1
	VMULPS Y0, Y1, Y1
	VMOVUPS Y1, (DI)(CX*4)
	ADDQ $8, CX
	CMPQ CX, R13
	JB   dg_vec
	JMP  dg_tail

dg_nt:
	VMOVUPS (R9)(CX*4), Y1
	VADDPS (R11)(CX*4), Y1, Y1
	VMULPS Y0, Y1, Y1
	VMOVNTPS Y1, (DI)(CX*4)
	ADDQ $8, CX
	CMPQ CX, R13
	JB   dg_nt

dg_tail:
	CMPQ CX, R10
	JAE  dg_next
	VMOVSS (R9)(CX*4), X1
	VADDSS (R11)(CX*4), X1, X1
	VMULSS X0, X1, X1
	VMOVSS X1, (DI)(CX*4)
	INCQ CX
	JMP  dg_tail

dg_next:
	LEAQ (DI)(R10*4), DI
	LEAQ (R11)(R10*4), R11
	INCQ R8

upper: // b > a: nsz[a]·z[b]
	CMPQ   R8, K+120(FP)
	JAE    next_a
	VMOVSD (SI)(BX*8), X0
	VMULSD (DX)(R8*8), X0, X0
up:
	VCVTSD2SS X0, X0, X0
	VBROADCASTSS X0, Y0
	XORQ  CX, CX
	TESTQ R13, R13
	JZ    up_tail
	TESTQ R12, R12
	JNZ   up_nt

up_vec:
	VMOVUPS (R9)(CX*4), Y1
	VADDPS (R11)(CX*4), Y1, Y1
	VMULPS Y0, Y1, Y1
	VMOVUPS Y1, (DI)(CX*4)
	ADDQ $8, CX
	CMPQ CX, R13
	JB   up_vec
	JMP  up_tail

up_nt:
	VMOVUPS (R9)(CX*4), Y1
	VADDPS (R11)(CX*4), Y1, Y1
	VMULPS Y0, Y1, Y1
	VMOVNTPS Y1, (DI)(CX*4)
	ADDQ $8, CX
	CMPQ CX, R13
	JB   up_nt

up_tail:
	CMPQ CX, R10
	JAE  up_next
	VMOVSS (R9)(CX*4), X1
	VADDSS (R11)(CX*4), X1, X1
	VMULSS X0, X1, X1
	VMOVSS X1, (DI)(CX*4)
	INCQ CX
	JMP  up_tail

up_next:
	LEAQ (DI)(R10*4), DI
	LEAQ (R11)(R10*4), R11
	INCQ R8
	JMP upper

next_a:
	LEAQ (R9)(R10*4), R9
	INCQ BX
	JMP  loop_a

done:
	VZEROUPPER
	RET

// func centreAVX32(e, d []float32, m []float64, K, P int) (big bool)
//
// e[a·P+c] = float32(float64(d[a·P+c]) − m[c]) for a < K, c < P, four lanes at a time; big
// reports whether some |d − m| > 2¹⁰⁰ (±Inf included, NaN not).
TEXT ·centreAVX32(SB), NOSPLIT, $0-89
	MOVQ         e_base+0(FP), DI
	MOVQ         d_base+24(FP), SI
	MOVQ         m_base+48(FP), DX
	MOVQ         K+72(FP), BX
	MOVQ         P+80(FP), R10
	MOVQ         R10, R13
	ANDQ         $-4, R13
	MOVQ         $0x7fffffffffffffff, AX
	MOVQ         AX, X5
	VPBROADCASTQ X5, Y5
	MOVQ         $0x4630000000000000, AX
	MOVQ         AX, X6
	VPBROADCASTQ X6, Y6
	VXORPD       Y4, Y4, Y4
	VXORPD       X7, X7, X7

c32_a:
	TESTQ BX, BX
	JZ    c32_done
	XORQ  CX, CX
	TESTQ R13, R13
	JZ    c32_tail

c32_vec:
	VCVTPS2PD  (SI)(CX*4), Y1
	VSUBPD     (DX)(CX*8), Y1, Y1
	VCVTPD2PSY Y1, X2
	VMOVUPS    X2, (DI)(CX*4)
	VANDPD     Y5, Y1, Y3
	VCMPPD     $0x1e, Y6, Y3, Y3
	VORPD      Y3, Y4, Y4
	ADDQ       $4, CX
	CMPQ       CX, R13
	JB         c32_vec

c32_tail:
	CMPQ      CX, R10
	JAE       c32_next
	VCVTSS2SD (SI)(CX*4), X1, X1
	VSUBSD    (DX)(CX*8), X1, X1
	VCVTSD2SS X1, X1, X2
	VMOVSS    X2, (DI)(CX*4)
	VANDPD    X5, X1, X3
	VCMPSD    $0x1e, X6, X3, X3
	VORPD     X3, X7, X7
	INCQ      CX
	JMP       c32_tail

c32_next:
	LEAQ (DI)(R10*4), DI
	LEAQ (SI)(R10*4), SI
	DECQ BX
	JMP  c32_a

c32_done:
	VMOVMSKPD Y4, AX
	VMOVMSKPD X7, CX
	ORL       CX, AX
	SETNE     big+88(FP)
	VZEROUPPER
	RET

// func centreAVX64(e, d, m []float64, K, P int)
//
// e[a·P+c] = d[a·P+c] − m[c] for a < K, c < P, four lanes at a time.
TEXT ·centreAVX64(SB), NOSPLIT, $0-88
	MOVQ e_base+0(FP), DI
	MOVQ d_base+24(FP), SI
	MOVQ m_base+48(FP), DX
	MOVQ K+72(FP), BX
	MOVQ P+80(FP), R10
	MOVQ R10, R13
	ANDQ $-4, R13

c64_a:
	TESTQ BX, BX
	JZ    c64_done
	XORQ  CX, CX
	TESTQ R13, R13
	JZ    c64_tail

c64_vec:
	VMOVUPD (SI)(CX*8), Y1
	VSUBPD  (DX)(CX*8), Y1, Y1
	VMOVUPD Y1, (DI)(CX*8)
	ADDQ    $4, CX
	CMPQ    CX, R13
	JB      c64_vec

c64_tail:
	CMPQ   CX, R10
	JAE    c64_next
	VMOVSD (SI)(CX*8), X1
	VSUBSD (DX)(CX*8), X1, X1
	VMOVSD X1, (DI)(CX*8)
	INCQ   CX
	JMP    c64_tail

c64_next:
	LEAQ (DI)(R10*8), DI
	LEAQ (SI)(R10*8), SI
	DECQ BX
	JMP  c64_a

c64_done:
	VZEROUPPER
	RET

// func meanAVX32(m, z []float64, d []float32, K, P int)
//
// m[c] = Σ_k z[k]·d[k·P+c] for c < P, the terms added in k order to 0, with the sums of 16,
// then 4, then 1 column held in registers across k.
TEXT ·meanAVX32(SB), NOSPLIT, $0-88
	MOVQ m_base+0(FP), DI
	MOVQ z_base+24(FP), DX
	MOVQ d_base+48(FP), SI
	MOVQ K+72(FP), BX
	MOVQ P+80(FP), R10
	MOVQ R10, R12
	SHLQ $2, R12           // row stride in bytes
	XORQ CX, CX                 // column

meanAVX32_c16:
	LEAQ   16(CX), AX
	CMPQ   AX, R10
	JA     meanAVX32_c4
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	LEAQ   (SI)(CX*4), R11
	XORQ   R8, R8

meanAVX32_k16:
	CMPQ         R8, BX
	JAE          meanAVX32_s16
	VBROADCASTSD (DX)(R8*8), Y0
	VCVTPS2PD 0(R11), Y1
	VMULPD       Y0, Y1, Y1
	VADDPD       Y1, Y4, Y4
	VCVTPS2PD 16(R11), Y1
	VMULPD       Y0, Y1, Y1
	VADDPD       Y1, Y5, Y5
	VCVTPS2PD 32(R11), Y1
	VMULPD       Y0, Y1, Y1
	VADDPD       Y1, Y6, Y6
	VCVTPS2PD 48(R11), Y1
	VMULPD       Y0, Y1, Y1
	VADDPD       Y1, Y7, Y7
	ADDQ         R12, R11
	INCQ         R8
	JMP          meanAVX32_k16

meanAVX32_s16:
	VMOVUPD Y4, (DI)(CX*8)
	VMOVUPD Y5, 32(DI)(CX*8)
	VMOVUPD Y6, 64(DI)(CX*8)
	VMOVUPD Y7, 96(DI)(CX*8)
	MOVQ    AX, CX
	JMP     meanAVX32_c16

meanAVX32_c4:
	LEAQ   4(CX), AX
	CMPQ   AX, R10
	JA     meanAVX32_c1
	VXORPD Y4, Y4, Y4
	LEAQ   (SI)(CX*4), R11
	XORQ   R8, R8

meanAVX32_k4:
	CMPQ         R8, BX
	JAE          meanAVX32_s4
	VBROADCASTSD (DX)(R8*8), Y0
	VCVTPS2PD 0(R11), Y1
	VMULPD       Y0, Y1, Y1
	VADDPD       Y1, Y4, Y4
	ADDQ         R12, R11
	INCQ         R8
	JMP          meanAVX32_k4

meanAVX32_s4:
	VMOVUPD Y4, (DI)(CX*8)
	MOVQ    AX, CX
	JMP     meanAVX32_c4

meanAVX32_c1:
	CMPQ   CX, R10
	JAE    meanAVX32_done
	VXORPD X4, X4, X4
	LEAQ   (SI)(CX*4), R11
	XORQ   R8, R8

meanAVX32_k1:
	CMPQ   R8, BX
	JAE    meanAVX32_s1
	VCVTSS2SD (R11), X1, X1
	VMULSD (DX)(R8*8), X1, X1
	VADDSD X1, X4, X4
	ADDQ   R12, R11
	INCQ   R8
	JMP    meanAVX32_k1

meanAVX32_s1:
	VMOVSD X4, (DI)(CX*8)
	INCQ   CX
	JMP    meanAVX32_c1

meanAVX32_done:
	VZEROUPPER
	RET

// func meanAVX64(m, z, d []float64, K, P int)
//
// m[c] = Σ_k z[k]·d[k·P+c] for c < P, the terms added in k order to 0, with the sums of 16,
// then 4, then 1 column held in registers across k.
TEXT ·meanAVX64(SB), NOSPLIT, $0-88
	MOVQ m_base+0(FP), DI
	MOVQ z_base+24(FP), DX
	MOVQ d_base+48(FP), SI
	MOVQ K+72(FP), BX
	MOVQ P+80(FP), R10
	MOVQ R10, R12
	SHLQ $3, R12           // row stride in bytes
	XORQ CX, CX                 // column

meanAVX64_c16:
	LEAQ   16(CX), AX
	CMPQ   AX, R10
	JA     meanAVX64_c4
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	LEAQ   (SI)(CX*8), R11
	XORQ   R8, R8

meanAVX64_k16:
	CMPQ         R8, BX
	JAE          meanAVX64_s16
	VBROADCASTSD (DX)(R8*8), Y0
	VMOVUPD 0(R11), Y1
	VMULPD       Y0, Y1, Y1
	VADDPD       Y1, Y4, Y4
	VMOVUPD 32(R11), Y1
	VMULPD       Y0, Y1, Y1
	VADDPD       Y1, Y5, Y5
	VMOVUPD 64(R11), Y1
	VMULPD       Y0, Y1, Y1
	VADDPD       Y1, Y6, Y6
	VMOVUPD 96(R11), Y1
	VMULPD       Y0, Y1, Y1
	VADDPD       Y1, Y7, Y7
	ADDQ         R12, R11
	INCQ         R8
	JMP          meanAVX64_k16

meanAVX64_s16:
	VMOVUPD Y4, (DI)(CX*8)
	VMOVUPD Y5, 32(DI)(CX*8)
	VMOVUPD Y6, 64(DI)(CX*8)
	VMOVUPD Y7, 96(DI)(CX*8)
	MOVQ    AX, CX
	JMP     meanAVX64_c16

meanAVX64_c4:
	LEAQ   4(CX), AX
	CMPQ   AX, R10
	JA     meanAVX64_c1
	VXORPD Y4, Y4, Y4
	LEAQ   (SI)(CX*8), R11
	XORQ   R8, R8

meanAVX64_k4:
	CMPQ         R8, BX
	JAE          meanAVX64_s4
	VBROADCASTSD (DX)(R8*8), Y0
	VMOVUPD 0(R11), Y1
	VMULPD       Y0, Y1, Y1
	VADDPD       Y1, Y4, Y4
	ADDQ         R12, R11
	INCQ         R8
	JMP          meanAVX64_k4

meanAVX64_s4:
	VMOVUPD Y4, (DI)(CX*8)
	MOVQ    AX, CX
	JMP     meanAVX64_c4

meanAVX64_c1:
	CMPQ   CX, R10
	JAE    meanAVX64_done
	VXORPD X4, X4, X4
	LEAQ   (SI)(CX*8), R11
	XORQ   R8, R8

meanAVX64_k1:
	CMPQ   R8, BX
	JAE    meanAVX64_s1
	VMOVSD (R11), X1
	VMULSD (DX)(R8*8), X1, X1
	VADDSD X1, X4, X4
	ADDQ   R12, R11
	INCQ   R8
	JMP    meanAVX64_k1

meanAVX64_s1:
	VMOVSD X4, (DI)(CX*8)
	INCQ   CX
	JMP    meanAVX64_c1

meanAVX64_done:
	VZEROUPPER
	RET

// func hvpOutAVX64(o, e, w, f, u []float64, K, P int)
//
// o[a·P+c] = f[a]·(e[a·P+c]·u[a] − w[c]) for a < K, c < P, four lanes at a time.
TEXT ·hvpOutAVX64(SB), NOSPLIT, $0-136
	MOVQ o_base+0(FP), DI
	MOVQ e_base+24(FP), SI
	MOVQ w_base+48(FP), DX
	MOVQ f_base+72(FP), R8
	MOVQ u_base+96(FP), R9
	MOVQ K+120(FP), BX
	MOVQ P+128(FP), R10
	MOVQ R10, R13
	ANDQ $-4, R13

h64_a:
	TESTQ        BX, BX
	JZ           h64_done
	VBROADCASTSD (R8), Y0
	VBROADCASTSD (R9), Y2
	XORQ         CX, CX
	TESTQ        R13, R13
	JZ           h64_tail

h64_vec:
	VMOVUPD (SI)(CX*8), Y1
	VMULPD  Y2, Y1, Y1
	VSUBPD  (DX)(CX*8), Y1, Y1
	VMULPD  Y0, Y1, Y1
	VMOVUPD Y1, (DI)(CX*8)
	ADDQ    $4, CX
	CMPQ    CX, R13
	JB      h64_vec

h64_tail:
	CMPQ   CX, R10
	JAE    h64_next
	VMOVSD (SI)(CX*8), X1
	VMULSD X2, X1, X1
	VSUBSD (DX)(CX*8), X1, X1
	VMULSD X0, X1, X1
	VMOVSD X1, (DI)(CX*8)
	INCQ   CX
	JMP    h64_tail

h64_next:
	LEAQ (DI)(R10*8), DI
	LEAQ (SI)(R10*8), SI
	ADDQ $8, R8
	ADDQ $8, R9
	DECQ BX
	JMP  h64_a

h64_done:
	VZEROUPPER
	RET

// func hvpOutAVX32(o []float32, e, w, f, u []float64, K, P int)
//
// hvpOutAVX64 computed in float64 and rounded once to float32.
TEXT ·hvpOutAVX32(SB), NOSPLIT, $0-136
	MOVQ o_base+0(FP), DI
	MOVQ e_base+24(FP), SI
	MOVQ w_base+48(FP), DX
	MOVQ f_base+72(FP), R8
	MOVQ u_base+96(FP), R9
	MOVQ K+120(FP), BX
	MOVQ P+128(FP), R10
	MOVQ R10, R13
	ANDQ $-4, R13

h32_a:
	TESTQ        BX, BX
	JZ           h32_done
	VBROADCASTSD (R8), Y0
	VBROADCASTSD (R9), Y2
	XORQ         CX, CX
	TESTQ        R13, R13
	JZ           h32_tail

h32_vec:
	VMOVUPD    (SI)(CX*8), Y1
	VMULPD     Y2, Y1, Y1
	VSUBPD     (DX)(CX*8), Y1, Y1
	VMULPD     Y0, Y1, Y1
	VCVTPD2PSY Y1, X1
	VMOVUPS    X1, (DI)(CX*4)
	ADDQ       $4, CX
	CMPQ       CX, R13
	JB         h32_vec

h32_tail:
	CMPQ      CX, R10
	JAE       h32_next
	VMOVSD    (SI)(CX*8), X1
	VMULSD    X2, X1, X1
	VSUBSD    (DX)(CX*8), X1, X1
	VMULSD    X0, X1, X1
	VCVTSD2SS X1, X1, X1
	VMOVSS    X1, (DI)(CX*4)
	INCQ      CX
	JMP       h32_tail

h32_next:
	LEAQ (DI)(R10*4), DI
	LEAQ (SI)(R10*8), SI
	ADDQ $8, R8
	ADDQ $8, R9
	DECQ BX
	JMP  h32_a

h32_done:
	VZEROUPPER
	RET

// func sfence()
TEXT ·sfence(SB), NOSPLIT, $0-0
	SFENCE
	RET

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv0() (eax uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-4
	MOVL   $0, CX
	XGETBV
	MOVL   AX, eax+0(FP)
	RET

// The softmax gate (gateAVX64, gateAVX32): gateGo four lanes at a time, with expNeg (exp.go)
// as the same sequence of operations, so the same bits; no FMA, which would round once where
// the Go code rounds twice. The constants are four lanes each, for memory operands.
DATA gateLog2e<>+0(SB)/8, $0x3ff71547652b82fe
DATA gateLog2e<>+8(SB)/8, $0x3ff71547652b82fe
DATA gateLog2e<>+16(SB)/8, $0x3ff71547652b82fe
DATA gateLog2e<>+24(SB)/8, $0x3ff71547652b82fe
GLOBL gateLog2e<>(SB), RODATA|NOPTR, $32

DATA gateLn2Hi<>+0(SB)/8, $0x3fe62e42fee00000
DATA gateLn2Hi<>+8(SB)/8, $0x3fe62e42fee00000
DATA gateLn2Hi<>+16(SB)/8, $0x3fe62e42fee00000
DATA gateLn2Hi<>+24(SB)/8, $0x3fe62e42fee00000
GLOBL gateLn2Hi<>(SB), RODATA|NOPTR, $32

DATA gateLn2Lo<>+0(SB)/8, $0x3dea39ef35793c76
DATA gateLn2Lo<>+8(SB)/8, $0x3dea39ef35793c76
DATA gateLn2Lo<>+16(SB)/8, $0x3dea39ef35793c76
DATA gateLn2Lo<>+24(SB)/8, $0x3dea39ef35793c76
GLOBL gateLn2Lo<>(SB), RODATA|NOPTR, $32

DATA gateP1<>+0(SB)/8, $0x3fc555555555553e
DATA gateP1<>+8(SB)/8, $0x3fc555555555553e
DATA gateP1<>+16(SB)/8, $0x3fc555555555553e
DATA gateP1<>+24(SB)/8, $0x3fc555555555553e
GLOBL gateP1<>(SB), RODATA|NOPTR, $32

DATA gateP2<>+0(SB)/8, $0xbf66c16c16bebd93
DATA gateP2<>+8(SB)/8, $0xbf66c16c16bebd93
DATA gateP2<>+16(SB)/8, $0xbf66c16c16bebd93
DATA gateP2<>+24(SB)/8, $0xbf66c16c16bebd93
GLOBL gateP2<>(SB), RODATA|NOPTR, $32

DATA gateP3<>+0(SB)/8, $0x3f11566aaf25de2c
DATA gateP3<>+8(SB)/8, $0x3f11566aaf25de2c
DATA gateP3<>+16(SB)/8, $0x3f11566aaf25de2c
DATA gateP3<>+24(SB)/8, $0x3f11566aaf25de2c
GLOBL gateP3<>(SB), RODATA|NOPTR, $32

DATA gateP4<>+0(SB)/8, $0xbebbbd41c5d26bf1
DATA gateP4<>+8(SB)/8, $0xbebbbd41c5d26bf1
DATA gateP4<>+16(SB)/8, $0xbebbbd41c5d26bf1
DATA gateP4<>+24(SB)/8, $0xbebbbd41c5d26bf1
GLOBL gateP4<>(SB), RODATA|NOPTR, $32

DATA gateP5<>+0(SB)/8, $0x3e66376972bea4d0
DATA gateP5<>+8(SB)/8, $0x3e66376972bea4d0
DATA gateP5<>+16(SB)/8, $0x3e66376972bea4d0
DATA gateP5<>+24(SB)/8, $0x3e66376972bea4d0
GLOBL gateP5<>(SB), RODATA|NOPTR, $32

// The exponent bias, as four int32 lanes.
DATA gateBias<>+0(SB)/8, $0x000003ff000003ff
DATA gateBias<>+8(SB)/8, $0x000003ff000003ff
GLOBL gateBias<>(SB), RODATA|NOPTR, $16

// Lane masks for the last K mod 4 atoms: the four int32 lanes at gateMask<>+16−4·r have
// their first r lanes set (sign-extended to int64 lanes for float64 data).
DATA gateMask<>+0(SB)/8, $0xffffffffffffffff
DATA gateMask<>+8(SB)/8, $0xffffffffffffffff
DATA gateMask<>+16(SB)/8, $0
DATA gateMask<>+24(SB)/8, $0
GLOBL gateMask<>(SB), RODATA|NOPTR, $32

// GATEEXP replaces the four lanes of Y1 by expNeg of them, step by step as in exp.go, with
// Y15 = −746, Y11 = 1, Y10 = 2 and Y2–Y7 as scratch:
//
//	x = max(x, −746)       VMAXPD returns its second source (Go's first operand) when either
//	                       is NaN, so a NaN x stays NaN
//	kf = round(x·log2e)    Y2, to nearest even
//	hi = x − kf·ln2Hi      Y3
//	lo = kf·ln2Lo          Y4
//	r = hi − lo            Y5
//	t = r·r                Y6
//	p = t·(P1 + t·(P2 + t·(P3 + t·(P4 + t·P5))))   Y7
//	c = r − p              Y7
//	y = 1 − ((lo − r·c/(2 − c)) − hi)              Y3
//	k1 = k >> 1, k2 = k − k1 (int32 lanes), 2^k1 and 2^k2 from the exponent bits, and
//	y·2^k1·2^k2 in that order: the first product is exact, the second rounds once.
#define GATEEXP \
	VMAXPD     Y1, Y15, Y1; \
	VMULPD     gateLog2e<>(SB), Y1, Y2; \
	VROUNDPD   $0, Y2, Y2; \
	VMULPD     gateLn2Hi<>(SB), Y2, Y3; \
	VSUBPD     Y3, Y1, Y3; \
	VMULPD     gateLn2Lo<>(SB), Y2, Y4; \
	VSUBPD     Y4, Y3, Y5; \
	VMULPD     Y5, Y5, Y6; \
	VMULPD     gateP5<>(SB), Y6, Y7; \
	VADDPD     gateP4<>(SB), Y7, Y7; \
	VMULPD     Y6, Y7, Y7; \
	VADDPD     gateP3<>(SB), Y7, Y7; \
	VMULPD     Y6, Y7, Y7; \
	VADDPD     gateP2<>(SB), Y7, Y7; \
	VMULPD     Y6, Y7, Y7; \
	VADDPD     gateP1<>(SB), Y7, Y7; \
	VMULPD     Y6, Y7, Y7; \
	VSUBPD     Y7, Y5, Y7; \
	VMULPD     Y7, Y5, Y5; \
	VSUBPD     Y7, Y10, Y6; \
	VDIVPD     Y6, Y5, Y5; \
	VSUBPD     Y5, Y4, Y4; \
	VSUBPD     Y3, Y4, Y4; \
	VSUBPD     Y4, Y11, Y3; \
	VCVTPD2DQY Y2, X2; \
	VPSRAD     $1, X2, X4; \
	VPSUBD     X4, X2, X2; \
	VPADDD     gateBias<>(SB), X4, X4; \
	VPADDD     gateBias<>(SB), X2, X2; \
	VPMOVZXDQ  X4, Y4; \
	VPMOVZXDQ  X2, Y2; \
	VPSLLQ     $52, Y4, Y4; \
	VPSLLQ     $52, Y2, Y2; \
	VMULPD     Y4, Y3, Y3; \
	VMULPD     Y2, Y3, Y1

// func gateAVX64(z, l []float64, s float64, K int)
//
// z[k] = softmax(s·l)[k] for k < K, as gateGo: the maximum four lanes at a time (NaN passed
// over), the exponentials four lanes at a time with the last K mod 4 under a mask, summed
// in four lane accumulators and then the masked lanes in order, and z scaled by 1/sum.
TEXT ·gateAVX64(SB), NOSPLIT, $0-64
	MOVQ z_base+0(FP), DI
	MOVQ l_base+24(FP), SI
	MOVQ K+56(FP), BX
	MOVQ BX, R13
	ANDQ $-4, R13
	MOVQ $0xfff0000000000000, AX // −Inf
	MOVQ AX, X0
	VPBROADCASTQ X0, Y0
	XORQ CX, CX

g64_max4:
	CMPQ    CX, R13
	JAE     g64_maxh
	VMOVUPD (SI)(CX*8), Y1
	VMAXPD  Y0, Y1, Y0         // v > mx ? v : mx, so NaN is passed over as in gateGo
	ADDQ    $4, CX
	JMP     g64_max4

g64_maxh:
	VEXTRACTF128 $1, Y0, X1
	VMAXPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VMAXSD       X1, X0, X0

g64_max1:
	CMPQ   CX, BX
	JAE    g64_exp
	VMOVSD (SI)(CX*8), X1
	VMAXSD X0, X1, X0
	INCQ   CX
	JMP    g64_max1

g64_exp:
	VBROADCASTSD X0, Y14                 // mx
	VBROADCASTSD s+48(FP), Y13
	MOVQ         $0xc087500000000000, AX // −746
	MOVQ         AX, X15
	VPBROADCASTQ X15, Y15
	MOVQ         $0x3ff0000000000000, AX // 1
	MOVQ         AX, X11
	VPBROADCASTQ X11, Y11
	MOVQ         $0x4000000000000000, AX // 2
	MOVQ         AX, X10
	VPBROADCASTQ X10, Y10
	VXORPD       Y12, Y12, Y12           // lane sums
	XORQ         CX, CX

g64_exp4:
	CMPQ    CX, R13
	JAE     g64_sum
	VMOVUPD (SI)(CX*8), Y1
	VSUBPD  Y14, Y1, Y1
	VMULPD  Y13, Y1, Y1
	GATEEXP
	VMOVUPD Y1, (DI)(CX*8)
	VADDPD  Y1, Y12, Y12
	ADDQ    $4, CX
	JMP     g64_exp4

g64_sum:
	VEXTRACTF128 $1, Y12, X2
	VHADDPD      X2, X12, X0 // a0 + a1, a2 + a3
	VHADDPD      X0, X0, X0
	MOVQ         BX, DX
	SUBQ         CX, DX      // K mod 4
	JZ           g64_norm
	NEGQ         DX
	LEAQ         gateMask<>(SB), AX
	VPMOVSXDQ    16(AX)(DX*4), Y8
	VMASKMOVPD   (SI)(CX*8), Y8, Y1
	VSUBPD       Y14, Y1, Y1
	VMULPD       Y13, Y1, Y1
	GATEEXP
	VMASKMOVPD   Y1, Y8, (DI)(CX*8)
	VADDSD       X1, X0, X0
	CMPQ         DX, $-1
	JEQ          g64_norm
	VPERMILPD    $1, X1, X2
	VADDSD       X2, X0, X0
	CMPQ         DX, $-2
	JEQ          g64_norm
	VEXTRACTF128 $1, Y1, X2
	VADDSD       X2, X0, X0

g64_norm:
	VDIVSD       X0, X11, X1 // 1/sum
	VBROADCASTSD X1, Y1
	XORQ         CX, CX

g64_norm4:
	CMPQ    CX, R13
	JAE     g64_norm1
	VMULPD  (DI)(CX*8), Y1, Y2
	VMOVUPD Y2, (DI)(CX*8)
	ADDQ    $4, CX
	JMP     g64_norm4

g64_norm1:
	CMPQ   CX, BX
	JAE    g64_done
	VMULSD (DI)(CX*8), X1, X2
	VMOVSD X2, (DI)(CX*8)
	INCQ   CX
	JMP    g64_norm1

g64_done:
	VZEROUPPER
	RET

// func gateAVX32(z []float64, l []float32, s float64, K int)
//
// gateAVX64 for float32 logits, widened to float64 as they are loaded.
TEXT ·gateAVX32(SB), NOSPLIT, $0-64
	MOVQ z_base+0(FP), DI
	MOVQ l_base+24(FP), SI
	MOVQ K+56(FP), BX
	MOVQ BX, R13
	ANDQ $-4, R13
	MOVQ $0xfff0000000000000, AX // −Inf
	MOVQ AX, X0
	VPBROADCASTQ X0, Y0
	XORQ CX, CX

g32_max4:
	CMPQ      CX, R13
	JAE       g32_maxh
	VCVTPS2PD (SI)(CX*4), Y1
	VMAXPD    Y0, Y1, Y0       // v > mx ? v : mx, so NaN is passed over as in gateGo
	ADDQ      $4, CX
	JMP       g32_max4

g32_maxh:
	VEXTRACTF128 $1, Y0, X1
	VMAXPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VMAXSD       X1, X0, X0

g32_max1:
	CMPQ      CX, BX
	JAE       g32_exp
	VCVTSS2SD (SI)(CX*4), X1, X1
	VMAXSD    X0, X1, X0
	INCQ      CX
	JMP       g32_max1

g32_exp:
	VBROADCASTSD X0, Y14                 // mx
	VBROADCASTSD s+48(FP), Y13
	MOVQ         $0xc087500000000000, AX // −746
	MOVQ         AX, X15
	VPBROADCASTQ X15, Y15
	MOVQ         $0x3ff0000000000000, AX // 1
	MOVQ         AX, X11
	VPBROADCASTQ X11, Y11
	MOVQ         $0x4000000000000000, AX // 2
	MOVQ         AX, X10
	VPBROADCASTQ X10, Y10
	VXORPD       Y12, Y12, Y12           // lane sums
	XORQ         CX, CX

g32_exp4:
	CMPQ      CX, R13
	JAE       g32_sum
	VCVTPS2PD (SI)(CX*4), Y1
	VSUBPD    Y14, Y1, Y1
	VMULPD    Y13, Y1, Y1
	GATEEXP
	VMOVUPD   Y1, (DI)(CX*8)
	VADDPD    Y1, Y12, Y12
	ADDQ      $4, CX
	JMP       g32_exp4

g32_sum:
	VEXTRACTF128 $1, Y12, X2
	VHADDPD      X2, X12, X0 // a0 + a1, a2 + a3
	VHADDPD      X0, X0, X0
	MOVQ         BX, DX
	SUBQ         CX, DX      // K mod 4
	JZ           g32_norm
	NEGQ         DX
	LEAQ         gateMask<>(SB), AX
	VMOVDQU      16(AX)(DX*4), X9
	VPMOVSXDQ    X9, Y8
	VMASKMOVPS   (SI)(CX*4), X9, X1
	VCVTPS2PD    X1, Y1
	VSUBPD       Y14, Y1, Y1
	VMULPD       Y13, Y1, Y1
	GATEEXP
	VMASKMOVPD   Y1, Y8, (DI)(CX*8)
	VADDSD       X1, X0, X0
	CMPQ         DX, $-1
	JEQ          g32_norm
	VPERMILPD    $1, X1, X2
	VADDSD       X2, X0, X0
	CMPQ         DX, $-2
	JEQ          g32_norm
	VEXTRACTF128 $1, Y1, X2
	VADDSD       X2, X0, X0

g32_norm:
	VDIVSD       X0, X11, X1 // 1/sum
	VBROADCASTSD X1, Y1
	XORQ         CX, CX

g32_norm4:
	CMPQ    CX, R13
	JAE     g32_norm1
	VMULPD  (DI)(CX*8), Y1, Y2
	VMOVUPD Y2, (DI)(CX*8)
	ADDQ    $4, CX
	JMP     g32_norm4

g32_norm1:
	CMPQ   CX, BX
	JAE    g32_done
	VMULSD (DI)(CX*8), X1, X2
	VMOVSD X2, (DI)(CX*8)
	INCQ   CX
	JMP    g32_norm1

g32_done:
	VZEROUPPER
	RET
