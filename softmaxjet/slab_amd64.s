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
	VMOVUPD (R9)(CX*8), Y1
	VADDPD (R11)(CX*8), Y1, Y1
	VMULPD Y0, Y1, Y1
	VMOVNTPD Y1, (DI)(CX*8)
	ADDQ $4, CX
	CMPQ CX, R13
	JB   lo_nt

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
	VMOVUPD (R9)(CX*8), Y1
	VADDPD (R11)(CX*8), Y1, Y1
	VMULPD Y0, Y1, Y1
	VMOVNTPD Y1, (DI)(CX*8)
	ADDQ $4, CX
	CMPQ CX, R13
	JB   dg_nt

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
	VMOVUPD (R9)(CX*8), Y1
	VADDPD (R11)(CX*8), Y1, Y1
	VMULPD Y0, Y1, Y1
	VMOVNTPD Y1, (DI)(CX*8)
	ADDQ $4, CX
	CMPQ CX, R13
	JB   up_nt

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
// m[c] = Σ_k z[k]·float64(d[k·P+c]), the terms added in k order from 0, four lanes at a time.
TEXT ·meanAVX32(SB), NOSPLIT, $0-88
	MOVQ   m_base+0(FP), DI
	MOVQ   z_base+24(FP), DX
	MOVQ   d_base+48(FP), SI
	MOVQ   K+72(FP), BX
	MOVQ   P+80(FP), R10
	MOVQ   R10, R13
	ANDQ   $-4, R13
	XORQ   CX, CX
	VXORPD Y1, Y1, Y1

m32_zero:
	CMPQ   CX, R10
	JAE    m32_k
	VMOVSD X1, (DI)(CX*8)
	INCQ   CX
	JMP    m32_zero

m32_k:
	TESTQ        BX, BX
	JZ           m32_done
	VBROADCASTSD (DX), Y0
	XORQ         CX, CX
	TESTQ        R13, R13
	JZ           m32_tail

m32_vec:
	VCVTPS2PD (SI)(CX*4), Y1
	VMULPD    Y0, Y1, Y1
	VADDPD    (DI)(CX*8), Y1, Y1
	VMOVUPD   Y1, (DI)(CX*8)
	ADDQ      $4, CX
	CMPQ      CX, R13
	JB        m32_vec

m32_tail:
	CMPQ      CX, R10
	JAE       m32_next
	VCVTSS2SD (SI)(CX*4), X1, X1
	VMULSD    X0, X1, X1
	VADDSD    (DI)(CX*8), X1, X1
	VMOVSD    X1, (DI)(CX*8)
	INCQ      CX
	JMP       m32_tail

m32_next:
	LEAQ (SI)(R10*4), SI
	ADDQ $8, DX
	DECQ BX
	JMP  m32_k

m32_done:
	VZEROUPPER
	RET

// func meanAVX64(m, z, d []float64, K, P int)
//
// meanAVX32 for float64 decoded values.
TEXT ·meanAVX64(SB), NOSPLIT, $0-88
	MOVQ   m_base+0(FP), DI
	MOVQ   z_base+24(FP), DX
	MOVQ   d_base+48(FP), SI
	MOVQ   K+72(FP), BX
	MOVQ   P+80(FP), R10
	MOVQ   R10, R13
	ANDQ   $-4, R13
	XORQ   CX, CX
	VXORPD Y1, Y1, Y1

m64_zero:
	CMPQ   CX, R10
	JAE    m64_k
	VMOVSD X1, (DI)(CX*8)
	INCQ   CX
	JMP    m64_zero

m64_k:
	TESTQ        BX, BX
	JZ           m64_done
	VBROADCASTSD (DX), Y0
	XORQ         CX, CX
	TESTQ        R13, R13
	JZ           m64_tail

m64_vec:
	VMOVUPD (SI)(CX*8), Y1
	VMULPD  Y0, Y1, Y1
	VADDPD  (DI)(CX*8), Y1, Y1
	VMOVUPD Y1, (DI)(CX*8)
	ADDQ    $4, CX
	CMPQ    CX, R13
	JB      m64_vec

m64_tail:
	CMPQ   CX, R10
	JAE    m64_next
	VMOVSD (SI)(CX*8), X1
	VMULSD X0, X1, X1
	VADDSD (DI)(CX*8), X1, X1
	VMOVSD X1, (DI)(CX*8)
	INCQ   CX
	JMP    m64_tail

m64_next:
	LEAQ (SI)(R10*8), SI
	ADDQ $8, DX
	DECQ BX
	JMP  m64_k

m64_done:
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
