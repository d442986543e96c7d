//go:build amd64 && !purego

#include "textflag.h"

// The second channel of one row is K×K blocks of P: block (a,b) is f·(e[a] + e[b]) with the
// pair's coefficient f (pairCoef). coefAVX64 and coefAVX32 compute nsz, diag and the range
// verdict of secondCoefs four lanes at a time, and every coefficient once, rounded to the
// element type, into the matrix c (row a at c[a·Kp], Kp = K rounded up to 4): c[a·Kp+b] for
// b ≥ a. Block (a,b) with b < a takes c[b·Kp+a], the coefficient of the same pair, so the row
// writers rowAVX64 and rowAVX32 only broadcast a coefficient per block, from memory. No FMA
// anywhere: Go rounds the product and the sum separately, and so must these loops.

// Lane masks for the last K mod 4 atoms: the four int64 lanes at coefPad<>+32−8·r have the
// lanes from r on set (the padding).
DATA coefPad<>+0(SB)/8, $0
DATA coefPad<>+8(SB)/8, $0
DATA coefPad<>+16(SB)/8, $0
DATA coefPad<>+24(SB)/8, $0
DATA coefPad<>+32(SB)/8, $-1
DATA coefPad<>+40(SB)/8, $-1
DATA coefPad<>+48(SB)/8, $-1
DATA coefPad<>+56(SB)/8, $-1
GLOBL coefPad<>(SB), RODATA|NOPTR, $64

// COEFCONST loads the constants of COEFCHUNK: Y15 = s2, Y14 = 1, Y13 = 1/2, Y12 = the sign
// bit, Y11 = all but the sign bit, Y10 = 2⁻⁹⁹, Y9 = 2¹⁰⁰, Y6 = 0, Y0 = +Inf, and the
// accumulators Y8 = +Inf (smallest positive ζ) and Y7 = all ones (lanes that passed).
#define COEFCONST \
	VBROADCASTSD s2+96(FP), Y15; \
	MOVQ         $0x3ff0000000000000, AX; \
	MOVQ         AX, X14; \
	VPBROADCASTQ X14, Y14; \
	MOVQ         $0x3fe0000000000000, AX; \
	MOVQ         AX, X13; \
	VPBROADCASTQ X13, Y13; \
	MOVQ         $0x8000000000000000, AX; \
	MOVQ         AX, X12; \
	VPBROADCASTQ X12, Y12; \
	MOVQ         $0x7fffffffffffffff, AX; \
	MOVQ         AX, X11; \
	VPBROADCASTQ X11, Y11; \
	MOVQ         $0x39c0000000000000, AX; \
	MOVQ         AX, X10; \
	VPBROADCASTQ X10, Y10; \
	MOVQ         $0x4630000000000000, AX; \
	MOVQ         AX, X9; \
	VPBROADCASTQ X9, Y9; \
	MOVQ         $0x7ff0000000000000, AX; \
	MOVQ         AX, X0; \
	VPBROADCASTQ X0, Y0; \
	VMOVAPD      Y0, Y8; \
	VXORPD       Y6, Y6, Y6; \
	VPCMPEQQ     Y7, Y7, Y7

// COEFCHUNK is secondCoefs on the four ζ in Y1 (atoms CX to CX+3): it stores nsz = −(s2·ζ)
// and diag = s2·ζ·(1 − 2ζ)/2 (2ζ as ζ + ζ and /2 as ·1/2, both exact: the same bits) at
// (DI) and (SI), and leaves in Y2 the lanes that pass (diag 0 or of magnitude in [2⁻⁹⁹,
// 2¹⁰⁰], ζ ≥ 0; a NaN passes neither) and in Y4 ζ where ζ > 0, +Inf elsewhere.
#define COEFCHUNK \
	VMULPD    Y1, Y15, Y2; \
	VXORPD    Y12, Y2, Y3; \
	VMOVUPD   Y3, (DI)(CX*8); \
	VADDPD    Y1, Y1, Y4; \
	VSUBPD    Y4, Y14, Y4; \
	VMULPD    Y4, Y2, Y4; \
	VMULPD    Y13, Y4, Y4; \
	VMOVUPD   Y4, (SI)(CX*8); \
	VANDPD    Y11, Y4, Y5; \
	VCMPPD    $0x1d, Y10, Y5, Y2; \
	VCMPPD    $0x12, Y9, Y5, Y3; \
	VANDPD    Y3, Y2, Y2; \
	VCMPPD    $0x00, Y6, Y5, Y3; \
	VORPD     Y3, Y2, Y2; \
	VCMPPD    $0x1d, Y6, Y1, Y3; \
	VANDPD    Y3, Y2, Y2; \
	VCMPPD    $0x1e, Y6, Y1, Y3; \
	VBLENDVPD Y3, Y1, Y0, Y4

// func coefAVX64(c, nsz, diag, z []float64, s2 float64, K, Kp int) (zmin float64, ok bool)
//
// nsz[a], diag[a] for a < Kp (z padded to Kp), c[a·Kp+b] = nsz[a]·z[b] for a < K and
// (a &^ 3) ≤ b < Kp, then c[a·Kp+a] = diag[a]; zmin is the smallest positive z[a], a < K
// (+Inf if none), and ok whether every a < K passed the range check of secondCoefs. The
// products have nsz as the first operand, as in pairCoef.
TEXT ·coefAVX64(SB), NOSPLIT, $0-129
	MOVQ nsz_base+24(FP), DI
	MOVQ diag_base+48(FP), SI
	MOVQ z_base+72(FP), DX
	MOVQ K+104(FP), BX
	MOVQ Kp+112(FP), R10
	COEFCONST
	MOVQ BX, R13
	ANDQ $-4, R13
	XORQ CX, CX

c64_p1:
	CMPQ    CX, R13
	JAE     c64_p1tail
	VMOVUPD (DX)(CX*8), Y1
	COEFCHUNK
	VANDPD  Y2, Y7, Y7
	VMINPD  Y4, Y8, Y8
	ADDQ    $4, CX
	JMP     c64_p1

c64_p1tail:
	CMPQ      CX, BX
	JAE       c64_p1done
	MOVQ      CX, AX
	SUBQ      BX, AX          // −(K mod 4)
	LEAQ      coefPad<>(SB), R9
	VMOVUPD   (DX)(CX*8), Y1
	COEFCHUNK
	VMOVDQU   32(R9)(AX*8), Y5 // the padding lanes
	VORPD     Y5, Y2, Y2
	VBLENDVPD Y5, Y0, Y4, Y4
	VANDPD    Y2, Y7, Y7
	VMINPD    Y4, Y8, Y8

c64_p1done:
	VEXTRACTF128 $1, Y8, X1
	VMINPD       X1, X8, X8
	VPERMILPD    $1, X8, X1
	VMINSD       X1, X8, X8
	VMOVSD       X8, zmin+120(FP)
	VMOVMSKPD    Y7, AX
	CMPL         AX, $15
	SETEQ        ok+128(FP)

	MOVQ c_base+0(FP), R8   // row a of c
	MOVQ R10, R9
	SHLQ $3, R9             // its length in bytes
	XORQ R11, R11           // a

c64_p2:
	CMPQ         R11, BX
	JAE          c64_done
	VBROADCASTSD (DI)(R11*8), Y1 // nsz[a]
	MOVQ         R11, CX
	ANDQ         $-4, CX

c64_p2b:
	VMULPD  (DX)(CX*8), Y1, Y2
	VMOVUPD Y2, (R8)(CX*8)
	ADDQ    $4, CX
	CMPQ    CX, R10
	JB      c64_p2b
	MOVQ    (SI)(R11*8), AX
	MOVQ    AX, (R8)(R11*8)
	ADDQ    R9, R8
	INCQ    R11
	JMP     c64_p2

c64_done:
	VZEROUPPER
	RET

// func coefAVX32(c []float32, nsz, diag, z []float64, s2 float64, K, Kp int) (zmin float64, ok bool)
//
// coefAVX64 with c in float32: each coefficient computed in float64 and rounded once.
TEXT ·coefAVX32(SB), NOSPLIT, $0-129
	MOVQ nsz_base+24(FP), DI
	MOVQ diag_base+48(FP), SI
	MOVQ z_base+72(FP), DX
	MOVQ K+104(FP), BX
	MOVQ Kp+112(FP), R10
	COEFCONST
	MOVQ BX, R13
	ANDQ $-4, R13
	XORQ CX, CX

c32_p1:
	CMPQ    CX, R13
	JAE     c32_p1tail
	VMOVUPD (DX)(CX*8), Y1
	COEFCHUNK
	VANDPD  Y2, Y7, Y7
	VMINPD  Y4, Y8, Y8
	ADDQ    $4, CX
	JMP     c32_p1

c32_p1tail:
	CMPQ      CX, BX
	JAE       c32_p1done
	MOVQ      CX, AX
	SUBQ      BX, AX          // −(K mod 4)
	LEAQ      coefPad<>(SB), R9
	VMOVUPD   (DX)(CX*8), Y1
	COEFCHUNK
	VMOVDQU   32(R9)(AX*8), Y5 // the padding lanes
	VORPD     Y5, Y2, Y2
	VBLENDVPD Y5, Y0, Y4, Y4
	VANDPD    Y2, Y7, Y7
	VMINPD    Y4, Y8, Y8

c32_p1done:
	VEXTRACTF128 $1, Y8, X1
	VMINPD       X1, X8, X8
	VPERMILPD    $1, X8, X1
	VMINSD       X1, X8, X8
	VMOVSD       X8, zmin+120(FP)
	VMOVMSKPD    Y7, AX
	CMPL         AX, $15
	SETEQ        ok+128(FP)

	MOVQ c_base+0(FP), R8   // row a of c
	MOVQ R10, R9
	SHLQ $2, R9             // its length in bytes
	XORQ R11, R11           // a

c32_p2:
	CMPQ         R11, BX
	JAE          c32_done
	VBROADCASTSD (DI)(R11*8), Y1 // nsz[a]
	MOVQ         R11, CX
	ANDQ         $-4, CX

c32_p2b:
	VMULPD     (DX)(CX*8), Y1, Y2
	VCVTPD2PSY Y2, X2
	VMOVUPS    X2, (R8)(CX*4)
	ADDQ       $4, CX
	CMPQ       CX, R10
	JB         c32_p2b
	VCVTSD2SS  (SI)(R11*8), X2, X2
	VMOVSS     X2, (R8)(R11*4)
	ADDQ       R9, R8
	INCQ       R11
	JMP        c32_p2

c32_done:
	VZEROUPPER
	RET

// The row writers. Registers: BX = a, DI = the row's output at block (a,0), R11 = e, R14 =
// e[a], R10 = P in bytes (a block), R13 = its whole vectors in bytes, CX = the offset of
// block b in the output row and of e[b] in e, R12 = where the run of blocks ends, R8 = the
// coefficient of block b and R9 = the step to the next one (Kp elements for b < a, down a
// column of c, one element for b ≥ a, along a row), R15 = the variant: n = P·size/32 when
// P·size is a multiple of 32 bytes up to 128, e[a] then held in Y8–Y11 for the whole run,
// or 0, a loop over P; +8 for non-temporal stores. With e[a] in registers a block is one
// broadcast, n adds (e[b] from memory), n multiplies and n stores, and four instructions of
// bookkeeping: neither the choice of stores nor the pair's case (b < a, b = a, b > a) is
// made in the block loop, and no coefficient is computed or rounded there.

// ROWBLK32_n(ST): block b of a float32 row from e[a] in Y8–Y11, stored with ST.
#define ROWBLK32_1(ST) \
	VBROADCASTSS (R8), Y0; \
	VADDPS       (R11)(CX*1), Y8, Y1; \
	VMULPS       Y0, Y1, Y1; \
	ST           Y1, (DI)(CX*1)

#define ROWBLK32_2(ST) \
	VBROADCASTSS (R8), Y0; \
	VADDPS       (R11)(CX*1), Y8, Y1; \
	VADDPS       32(R11)(CX*1), Y9, Y2; \
	VMULPS       Y0, Y1, Y1; \
	VMULPS       Y0, Y2, Y2; \
	ST           Y1, (DI)(CX*1); \
	ST           Y2, 32(DI)(CX*1)

#define ROWBLK32_3(ST) \
	VBROADCASTSS (R8), Y0; \
	VADDPS       (R11)(CX*1), Y8, Y1; \
	VADDPS       32(R11)(CX*1), Y9, Y2; \
	VADDPS       64(R11)(CX*1), Y10, Y3; \
	VMULPS       Y0, Y1, Y1; \
	VMULPS       Y0, Y2, Y2; \
	VMULPS       Y0, Y3, Y3; \
	ST           Y1, (DI)(CX*1); \
	ST           Y2, 32(DI)(CX*1); \
	ST           Y3, 64(DI)(CX*1)

#define ROWBLK32_4(ST) \
	VBROADCASTSS (R8), Y0; \
	VADDPS       (R11)(CX*1), Y8, Y1; \
	VADDPS       32(R11)(CX*1), Y9, Y2; \
	VADDPS       64(R11)(CX*1), Y10, Y3; \
	VADDPS       96(R11)(CX*1), Y11, Y4; \
	VMULPS       Y0, Y1, Y1; \
	VMULPS       Y0, Y2, Y2; \
	VMULPS       Y0, Y3, Y3; \
	VMULPS       Y0, Y4, Y4; \
	ST           Y1, (DI)(CX*1); \
	ST           Y2, 32(DI)(CX*1); \
	ST           Y3, 64(DI)(CX*1); \
	ST           Y4, 96(DI)(CX*1)

#define ROWBLK64_1(ST) \
	VBROADCASTSD (R8), Y0; \
	VADDPD       (R11)(CX*1), Y8, Y1; \
	VMULPD       Y0, Y1, Y1; \
	ST           Y1, (DI)(CX*1)

#define ROWBLK64_2(ST) \
	VBROADCASTSD (R8), Y0; \
	VADDPD       (R11)(CX*1), Y8, Y1; \
	VADDPD       32(R11)(CX*1), Y9, Y2; \
	VMULPD       Y0, Y1, Y1; \
	VMULPD       Y0, Y2, Y2; \
	ST           Y1, (DI)(CX*1); \
	ST           Y2, 32(DI)(CX*1)

#define ROWBLK64_3(ST) \
	VBROADCASTSD (R8), Y0; \
	VADDPD       (R11)(CX*1), Y8, Y1; \
	VADDPD       32(R11)(CX*1), Y9, Y2; \
	VADDPD       64(R11)(CX*1), Y10, Y3; \
	VMULPD       Y0, Y1, Y1; \
	VMULPD       Y0, Y2, Y2; \
	VMULPD       Y0, Y3, Y3; \
	ST           Y1, (DI)(CX*1); \
	ST           Y2, 32(DI)(CX*1); \
	ST           Y3, 64(DI)(CX*1)

#define ROWBLK64_4(ST) \
	VBROADCASTSD (R8), Y0; \
	VADDPD       (R11)(CX*1), Y8, Y1; \
	VADDPD       32(R11)(CX*1), Y9, Y2; \
	VADDPD       64(R11)(CX*1), Y10, Y3; \
	VADDPD       96(R11)(CX*1), Y11, Y4; \
	VMULPD       Y0, Y1, Y1; \
	VMULPD       Y0, Y2, Y2; \
	VMULPD       Y0, Y3, Y3; \
	VMULPD       Y0, Y4, Y4; \
	ST           Y1, (DI)(CX*1); \
	ST           Y2, 32(DI)(CX*1); \
	ST           Y3, 64(DI)(CX*1); \
	ST           Y4, 96(DI)(CX*1)

// func rowAVX32(o, c, e []float32, K, P, Kp int, nt bool)
//
// One float32 row of the second channel, as rowT: block (a,b) is o[(a·K+b)·P+c] = f·(e[a·P+c]
// + e[b·P+c]) with f = c[min(a,b)·Kp + max(a,b)] (coefAVX32), eight lanes at a time, then
// one. With nt the vector stores are non-temporal (the caller guarantees that o and P·4 are
// multiples of 32 bytes). Kp ≥ 4.
TEXT ·rowAVX32(SB), NOSPLIT, $0-97
	MOVQ    o_base+0(FP), DI
	MOVQ    e_base+48(FP), R11
	MOVQ    P+80(FP), R10
	SHLQ    $2, R10
	MOVQ    R10, R13
	ANDQ    $-32, R13
	XORQ    R15, R15
	CMPQ    R10, $128
	JA      r32_variant
	CMPQ    R10, R13
	JNE     r32_variant
	MOVQ    R10, R15
	SHRQ    $5, R15

r32_variant:
	MOVBLZX nt+96(FP), AX
	SHLQ    $3, AX
	ORQ     AX, R15
	MOVQ    R11, R14
	XORQ    BX, BX

r32_a:
	CMPQ    BX, K+72(FP)
	JAE     r32_done
	MOVQ    R15, AX
	ANDQ    $7, AX
	JZ      r32_lower
	VMOVUPS (R14), Y8
	CMPQ    AX, $1
	JEQ     r32_lower
	VMOVUPS 32(R14), Y9
	CMPQ    AX, $2
	JEQ     r32_lower
	VMOVUPS 64(R14), Y10
	CMPQ    AX, $3
	JEQ     r32_lower
	VMOVUPS 96(R14), Y11

r32_lower: // b < a: c[b·Kp+a], down column a
	MOVQ c_base+24(FP), R8
	LEAQ (R8)(BX*4), R8
	MOVQ Kp+88(FP), R9
	SHLQ $2, R9
	XORQ CX, CX
	MOVQ R14, R12
	SUBQ R11, R12

r32_run:
	CMPQ CX, R12
	JAE  r32_rundone
	CMPQ R15, $10
	JEQ  r32_v2nt
	CMPQ R15, $12
	JEQ  r32_v4nt
	CMPQ R15, $2
	JEQ  r32_v2
	CMPQ R15, $4
	JEQ  r32_v4
	CMPQ R15, $9
	JEQ  r32_v1nt
	CMPQ R15, $11
	JEQ  r32_v3nt
	CMPQ R15, $1
	JEQ  r32_v1
	CMPQ R15, $3
	JEQ  r32_v3
	CMPQ R15, $8
	JEQ  r32_gnt
	JMP  r32_g

r32_rundone:
	CMPQ R9, $4
	JEQ  r32_nexta

	// b ≥ a: c[a·Kp+b], along row a
	MOVQ  Kp+88(FP), R8
	IMULQ BX, R8
	ADDQ  BX, R8
	SHLQ  $2, R8
	ADDQ  c_base+24(FP), R8
	MOVQ  $4, R9
	MOVQ  K+72(FP), R12
	IMULQ R10, R12
	JMP   r32_run

r32_nexta:
	ADDQ R10, R14
	ADDQ R12, DI
	INCQ BX
	JMP  r32_a

r32_v1:
	ROWBLK32_1(VMOVUPS)
	ADDQ R9, R8
	ADDQ $32, CX
	CMPQ CX, R12
	JB   r32_v1
	JMP  r32_rundone

r32_v2:
	ROWBLK32_2(VMOVUPS)
	ADDQ R9, R8
	ADDQ $64, CX
	CMPQ CX, R12
	JB   r32_v2
	JMP  r32_rundone

r32_v3:
	ROWBLK32_3(VMOVUPS)
	ADDQ R9, R8
	ADDQ $96, CX
	CMPQ CX, R12
	JB   r32_v3
	JMP  r32_rundone

r32_v4:
	ROWBLK32_4(VMOVUPS)
	ADDQ R9, R8
	ADDQ $128, CX
	CMPQ CX, R12
	JB   r32_v4
	JMP  r32_rundone

r32_v1nt:
	ROWBLK32_1(VMOVNTPS)
	ADDQ R9, R8
	ADDQ $32, CX
	CMPQ CX, R12
	JB   r32_v1nt
	JMP  r32_rundone

r32_v2nt:
	ROWBLK32_2(VMOVNTPS)
	ADDQ R9, R8
	ADDQ $64, CX
	CMPQ CX, R12
	JB   r32_v2nt
	JMP  r32_rundone

r32_v3nt:
	ROWBLK32_3(VMOVNTPS)
	ADDQ R9, R8
	ADDQ $96, CX
	CMPQ CX, R12
	JB   r32_v3nt
	JMP  r32_rundone

r32_v4nt:
	ROWBLK32_4(VMOVNTPS)
	ADDQ R9, R8
	ADDQ $128, CX
	CMPQ CX, R12
	JB   r32_v4nt
	JMP  r32_rundone

r32_gnt: // any P·4 a multiple of 32: whole vectors, non-temporal
	VBROADCASTSS (R8), Y0
	LEAQ         (R11)(CX*1), SI
	LEAQ         (DI)(CX*1), DX
	XORQ         AX, AX

r32_gntv:
	VMOVUPS  (R14)(AX*1), Y1
	VADDPS   (SI)(AX*1), Y1, Y1
	VMULPS   Y0, Y1, Y1
	VMOVNTPS Y1, (DX)(AX*1)
	ADDQ     $32, AX
	CMPQ     AX, R13
	JB       r32_gntv
	ADDQ     R9, R8
	ADDQ     R10, CX
	CMPQ     CX, R12
	JB       r32_gnt
	JMP      r32_rundone

r32_g: // any P: whole vectors, then one lane at a time
	VBROADCASTSS (R8), Y0
	LEAQ         (R11)(CX*1), SI
	LEAQ         (DI)(CX*1), DX
	XORQ         AX, AX
	TESTQ        R13, R13
	JZ           r32_gt

r32_gv:
	VMOVUPS (R14)(AX*1), Y1
	VADDPS  (SI)(AX*1), Y1, Y1
	VMULPS  Y0, Y1, Y1
	VMOVUPS Y1, (DX)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, R13
	JB      r32_gv

r32_gt:
	CMPQ   AX, R10
	JAE    r32_gnext
	VMOVSS (R14)(AX*1), X1
	VADDSS (SI)(AX*1), X1, X1
	VMULSS X0, X1, X1
	VMOVSS X1, (DX)(AX*1)
	ADDQ   $4, AX
	JMP    r32_gt

r32_gnext:
	ADDQ R9, R8
	ADDQ R10, CX
	CMPQ CX, R12
	JB   r32_g
	JMP  r32_rundone

r32_done:
	VZEROUPPER
	RET

// func rowAVX64(o, c, e []float64, K, P, Kp int, nt bool)
//
// rowAVX32 for float64: four lanes at a time, then one (P·8 a multiple of 32 bytes for nt).
TEXT ·rowAVX64(SB), NOSPLIT, $0-97
	MOVQ    o_base+0(FP), DI
	MOVQ    e_base+48(FP), R11
	MOVQ    P+80(FP), R10
	SHLQ    $3, R10
	MOVQ    R10, R13
	ANDQ    $-32, R13
	XORQ    R15, R15
	CMPQ    R10, $128
	JA      r64_variant
	CMPQ    R10, R13
	JNE     r64_variant
	MOVQ    R10, R15
	SHRQ    $5, R15

r64_variant:
	MOVBLZX nt+96(FP), AX
	SHLQ    $3, AX
	ORQ     AX, R15
	MOVQ    R11, R14
	XORQ    BX, BX

r64_a:
	CMPQ    BX, K+72(FP)
	JAE     r64_done
	MOVQ    R15, AX
	ANDQ    $7, AX
	JZ      r64_lower
	VMOVUPD (R14), Y8
	CMPQ    AX, $1
	JEQ     r64_lower
	VMOVUPD 32(R14), Y9
	CMPQ    AX, $2
	JEQ     r64_lower
	VMOVUPD 64(R14), Y10
	CMPQ    AX, $3
	JEQ     r64_lower
	VMOVUPD 96(R14), Y11

r64_lower: // b < a: c[b·Kp+a], down column a
	MOVQ c_base+24(FP), R8
	LEAQ (R8)(BX*8), R8
	MOVQ Kp+88(FP), R9
	SHLQ $3, R9
	XORQ CX, CX
	MOVQ R14, R12
	SUBQ R11, R12

r64_run:
	CMPQ CX, R12
	JAE  r64_rundone
	CMPQ R15, $12
	JEQ  r64_v4nt
	CMPQ R15, $10
	JEQ  r64_v2nt
	CMPQ R15, $4
	JEQ  r64_v4
	CMPQ R15, $2
	JEQ  r64_v2
	CMPQ R15, $9
	JEQ  r64_v1nt
	CMPQ R15, $11
	JEQ  r64_v3nt
	CMPQ R15, $1
	JEQ  r64_v1
	CMPQ R15, $3
	JEQ  r64_v3
	CMPQ R15, $8
	JEQ  r64_gnt
	JMP  r64_g

r64_rundone:
	CMPQ R9, $8
	JEQ  r64_nexta

	// b ≥ a: c[a·Kp+b], along row a
	MOVQ  Kp+88(FP), R8
	IMULQ BX, R8
	ADDQ  BX, R8
	SHLQ  $3, R8
	ADDQ  c_base+24(FP), R8
	MOVQ  $8, R9
	MOVQ  K+72(FP), R12
	IMULQ R10, R12
	JMP   r64_run

r64_nexta:
	ADDQ R10, R14
	ADDQ R12, DI
	INCQ BX
	JMP  r64_a

r64_v1:
	ROWBLK64_1(VMOVUPD)
	ADDQ R9, R8
	ADDQ $32, CX
	CMPQ CX, R12
	JB   r64_v1
	JMP  r64_rundone

r64_v2:
	ROWBLK64_2(VMOVUPD)
	ADDQ R9, R8
	ADDQ $64, CX
	CMPQ CX, R12
	JB   r64_v2
	JMP  r64_rundone

r64_v3:
	ROWBLK64_3(VMOVUPD)
	ADDQ R9, R8
	ADDQ $96, CX
	CMPQ CX, R12
	JB   r64_v3
	JMP  r64_rundone

r64_v4:
	ROWBLK64_4(VMOVUPD)
	ADDQ R9, R8
	ADDQ $128, CX
	CMPQ CX, R12
	JB   r64_v4
	JMP  r64_rundone

r64_v1nt:
	ROWBLK64_1(VMOVNTPD)
	ADDQ R9, R8
	ADDQ $32, CX
	CMPQ CX, R12
	JB   r64_v1nt
	JMP  r64_rundone

r64_v2nt:
	ROWBLK64_2(VMOVNTPD)
	ADDQ R9, R8
	ADDQ $64, CX
	CMPQ CX, R12
	JB   r64_v2nt
	JMP  r64_rundone

r64_v3nt:
	ROWBLK64_3(VMOVNTPD)
	ADDQ R9, R8
	ADDQ $96, CX
	CMPQ CX, R12
	JB   r64_v3nt
	JMP  r64_rundone

r64_v4nt:
	ROWBLK64_4(VMOVNTPD)
	ADDQ R9, R8
	ADDQ $128, CX
	CMPQ CX, R12
	JB   r64_v4nt
	JMP  r64_rundone

r64_gnt: // any P·8 a multiple of 32: whole vectors, non-temporal
	VBROADCASTSD (R8), Y0
	LEAQ         (R11)(CX*1), SI
	LEAQ         (DI)(CX*1), DX
	XORQ         AX, AX

r64_gntv:
	VMOVUPD  (R14)(AX*1), Y1
	VADDPD   (SI)(AX*1), Y1, Y1
	VMULPD   Y0, Y1, Y1
	VMOVNTPD Y1, (DX)(AX*1)
	ADDQ     $32, AX
	CMPQ     AX, R13
	JB       r64_gntv
	ADDQ     R9, R8
	ADDQ     R10, CX
	CMPQ     CX, R12
	JB       r64_gnt
	JMP      r64_rundone

r64_g: // any P: whole vectors, then one lane at a time
	VBROADCASTSD (R8), Y0
	LEAQ         (R11)(CX*1), SI
	LEAQ         (DI)(CX*1), DX
	XORQ         AX, AX
	TESTQ        R13, R13
	JZ           r64_gt

r64_gv:
	VMOVUPD (R14)(AX*1), Y1
	VADDPD  (SI)(AX*1), Y1, Y1
	VMULPD  Y0, Y1, Y1
	VMOVUPD Y1, (DX)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, R13
	JB      r64_gv

r64_gt:
	CMPQ   AX, R10
	JAE    r64_gnext
	VMOVSD (R14)(AX*1), X1
	VADDSD (SI)(AX*1), X1, X1
	VMULSD X0, X1, X1
	VMOVSD X1, (DX)(AX*1)
	ADDQ   $8, AX
	JMP    r64_gt

r64_gnext:
	ADDQ R9, R8
	ADDQ R10, CX
	CMPQ CX, R12
	JB   r64_g
	JMP  r64_rundone

r64_done:
	VZEROUPPER
	RET

// func centreAVX32(e, d []float32, m []float64, K, P int) (big bool)
//
// e[a·P+c] = float32(float64(d[a·P+c]) − m[c]) for a < K, c < P, eight lanes at a time, then
// four, then one; big reports whether some |d − m| > 2¹⁰⁰ (±Inf included), and maybe more
// (the caller then checks exactly). The eight-lane loop looks at the rounded float32 e, which
// is at least 2¹⁰⁰ in magnitude whenever |d − m| > 2¹⁰⁰ (rounding is monotonic and 2¹⁰⁰ a
// float32): as integers with the sign cleared, the largest |e| takes two instructions per
// eight lanes, against three per four for the comparison in float64 (a NaN counts as big).
TEXT ·centreAVX32(SB), NOSPLIT, $0-89
	MOVQ         e_base+0(FP), DI
	MOVQ         d_base+24(FP), SI
	MOVQ         m_base+48(FP), DX
	MOVQ         K+72(FP), BX
	MOVQ         P+80(FP), R10
	MOVQ         R10, R12
	ANDQ         $-8, R12
	MOVQ         R10, R13
	ANDQ         $-4, R13
	MOVQ         $0x7fffffffffffffff, AX
	MOVQ         AX, X5
	VPBROADCASTQ X5, Y5
	MOVQ         $0x4630000000000000, AX
	MOVQ         AX, X6
	VPBROADCASTQ X6, Y6
	MOVL         $0x7fffffff, AX
	MOVQ         AX, X10
	VPBROADCASTD X10, Y10
	VXORPD       Y4, Y4, Y4 // largest |e| bits, eight lanes
	VXORPD       Y9, Y9, Y9 // four-lane flags
	VXORPD       X7, X7, X7 // one-lane flags

c32_a:
	TESTQ BX, BX
	JZ    c32_done
	XORQ  CX, CX
	TESTQ R12, R12
	JZ    c32_vec4

c32_vec8:
	VCVTPS2PD   (SI)(CX*4), Y1
	VCVTPS2PD   16(SI)(CX*4), Y2
	VSUBPD      (DX)(CX*8), Y1, Y1
	VSUBPD      32(DX)(CX*8), Y2, Y2
	VCVTPD2PSY  Y1, X1
	VCVTPD2PSY  Y2, X2
	VINSERTF128 $1, X2, Y1, Y1
	VMOVUPS     Y1, (DI)(CX*4)
	VPAND       Y10, Y1, Y1
	VPMAXSD     Y1, Y4, Y4
	ADDQ        $8, CX
	CMPQ        CX, R12
	JB          c32_vec8

c32_vec4:
	CMPQ       CX, R13
	JAE        c32_tail
	VCVTPS2PD  (SI)(CX*4), Y1
	VSUBPD     (DX)(CX*8), Y1, Y1
	VCVTPD2PSY Y1, X2
	VMOVUPS    X2, (DI)(CX*4)
	VANDPD     Y5, Y1, Y3
	VCMPPD     $0x1e, Y6, Y3, Y3
	VORPD      Y3, Y9, Y9
	ADDQ       $4, CX

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
	MOVL         $0x717fffff, AX // below the bits of 2¹⁰⁰ in float32
	MOVQ         AX, X8
	VPBROADCASTD X8, Y8
	VPCMPGTD     Y8, Y4, Y4
	VMOVMSKPS    Y4, AX
	VMOVMSKPD    Y9, CX
	ORL          CX, AX
	VMOVMSKPD    X7, CX
	ORL          CX, AX
	SETNE        big+88(FP)
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
