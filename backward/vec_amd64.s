//go:build amd64 && !purego

#include "textflag.h"

// func dotAVX64(a, b []float64) (s0, s1, s2, s3 float64)
//
// The four interleaved partial sums of Σ a_i·b_i over the first len(a) &^ 3 elements: lane j
// adds a_i·b_i for i ≡ j (mod 4) in index order, each product rounded, then the sum (as dot).
TEXT ·dotAVX64(SB), NOSPLIT, $0-80
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	ANDQ   $-4, CX
	XORQ   AX, AX
	VXORPD Y0, Y0, Y0

d64_loop:
	CMPQ    AX, CX
	JAE     d64_done
	VMOVUPD (SI)(AX*8), Y1
	VMULPD  (DI)(AX*8), Y1, Y1
	VADDPD  Y1, Y0, Y0
	ADDQ    $4, AX
	JMP     d64_loop

d64_done:
	VMOVUPD Y0, s0+48(FP)
	VZEROUPPER
	RET

// func dotAVX32(a, b []float32) (s0, s1, s2, s3 float64)
//
// dotAVX64 for float32 data, each element widened to float64 first.
TEXT ·dotAVX32(SB), NOSPLIT, $0-80
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	ANDQ   $-4, CX
	XORQ   AX, AX
	VXORPD Y0, Y0, Y0

d32_loop:
	CMPQ      AX, CX
	JAE       d32_done
	VCVTPS2PD (SI)(AX*4), Y1
	VCVTPS2PD (DI)(AX*4), Y2
	VMULPD    Y2, Y1, Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      $4, AX
	JMP       d32_loop

d32_done:
	VMOVUPD Y0, s0+48(FP)
	VZEROUPPER
	RET

// func writeSoftmaxAVX64(dx, y, dy []float64, av float64)
//
// dx_i = y_i·(dy_i − av) for the first len(dx) &^ 3 elements.
TEXT ·writeSoftmaxAVX64(SB), NOSPLIT, $0-80
	MOVQ         dx_base+0(FP), DI
	MOVQ         dx_len+8(FP), CX
	MOVQ         y_base+24(FP), SI
	MOVQ         dy_base+48(FP), DX
	VBROADCASTSD av+72(FP), Y0
	ANDQ         $-4, CX
	XORQ         AX, AX

w64_loop:
	CMPQ    AX, CX
	JAE     w64_done
	VMOVUPD (DX)(AX*8), Y1
	VSUBPD  Y0, Y1, Y1
	VMULPD  (SI)(AX*8), Y1, Y1
	VMOVUPD Y1, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     w64_loop

w64_done:
	VZEROUPPER
	RET

// func writeSoftmaxAVX32(dx, y, dy []float32, av float64)
//
// writeSoftmaxAVX64 for float32 data: computed in float64, rounded once to float32.
TEXT ·writeSoftmaxAVX32(SB), NOSPLIT, $0-80
	MOVQ         dx_base+0(FP), DI
	MOVQ         dx_len+8(FP), CX
	MOVQ         y_base+24(FP), SI
	MOVQ         dy_base+48(FP), DX
	VBROADCASTSD av+72(FP), Y0
	ANDQ         $-4, CX
	XORQ         AX, AX

w32_loop:
	CMPQ       AX, CX
	JAE        w32_done
	VCVTPS2PD  (DX)(AX*4), Y1
	VSUBPD     Y0, Y1, Y1
	VCVTPS2PD  (SI)(AX*4), Y2
	VMULPD     Y2, Y1, Y1
	VCVTPD2PSY Y1, X1
	VMOVUPS    X1, (DI)(AX*4)
	ADDQ       $4, AX
	JMP        w32_loop

w32_done:
	VZEROUPPER
	RET

// func dotRows4AVX64(acc, a, b []float64, stride int)
//
// acc[i] += a[i]·b[i], then the same for rows a[stride:], a[2·stride:], a[3·stride:] (and b),
// in row order, for the first len(acc) &^ 3 columns.
TEXT ·dotRows4AVX64(SB), NOSPLIT, $0-80
	MOVQ acc_base+0(FP), DI
	MOVQ acc_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	MOVQ stride+72(FP), R8
	SHLQ $3, R8
	ANDQ $-4, CX
	XORQ AX, AX

r64_loop:
	CMPQ    AX, CX
	JAE     r64_done
	LEAQ    (SI)(AX*8), R9
	LEAQ    (DX)(AX*8), R10
	VMOVUPD (DI)(AX*8), Y0
	VMOVUPD (R9), Y1
	VMULPD  (R10), Y1, Y1
	VADDPD  Y1, Y0, Y0
	ADDQ    R8, R9
	ADDQ    R8, R10
	VMOVUPD (R9), Y1
	VMULPD  (R10), Y1, Y1
	VADDPD  Y1, Y0, Y0
	ADDQ    R8, R9
	ADDQ    R8, R10
	VMOVUPD (R9), Y1
	VMULPD  (R10), Y1, Y1
	VADDPD  Y1, Y0, Y0
	ADDQ    R8, R9
	ADDQ    R8, R10
	VMOVUPD (R9), Y1
	VMULPD  (R10), Y1, Y1
	VADDPD  Y1, Y0, Y0
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     r64_loop

r64_done:
	VZEROUPPER
	RET

// func dotRows4AVX32(acc []float64, a, b []float32, stride int)
//
// dotRows4AVX64 for float32 rows, each element widened to float64 first.
TEXT ·dotRows4AVX32(SB), NOSPLIT, $0-80
	MOVQ acc_base+0(FP), DI
	MOVQ acc_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	MOVQ stride+72(FP), R8
	SHLQ $2, R8
	ANDQ $-4, CX
	XORQ AX, AX

r32_loop:
	CMPQ      AX, CX
	JAE       r32_done
	LEAQ      (SI)(AX*4), R9
	LEAQ      (DX)(AX*4), R10
	VMOVUPD   (DI)(AX*8), Y0
	VCVTPS2PD (R9), Y1
	VCVTPS2PD (R10), Y2
	VMULPD    Y2, Y1, Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      R8, R9
	ADDQ      R8, R10
	VCVTPS2PD (R9), Y1
	VCVTPS2PD (R10), Y2
	VMULPD    Y2, Y1, Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      R8, R9
	ADDQ      R8, R10
	VCVTPS2PD (R9), Y1
	VCVTPS2PD (R10), Y2
	VMULPD    Y2, Y1, Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      R8, R9
	ADDQ      R8, R10
	VCVTPS2PD (R9), Y1
	VCVTPS2PD (R10), Y2
	VMULPD    Y2, Y1, Y1
	VADDPD    Y1, Y0, Y0
	VMOVUPD   Y0, (DI)(AX*8)
	ADDQ      $4, AX
	JMP       r32_loop

r32_done:
	VZEROUPPER
	RET

// func writeRowAVX64(dx, y, dy, a []float64)
//
// dx_i = y_i·(dy_i − a_i) for the first len(dx) &^ 3 columns.
TEXT ·writeRowAVX64(SB), NOSPLIT, $0-96
	MOVQ dx_base+0(FP), DI
	MOVQ dx_len+8(FP), CX
	MOVQ y_base+24(FP), SI
	MOVQ dy_base+48(FP), DX
	MOVQ a_base+72(FP), R8
	ANDQ $-4, CX
	XORQ AX, AX

x64_loop:
	CMPQ    AX, CX
	JAE     x64_done
	VMOVUPD (DX)(AX*8), Y1
	VSUBPD  (R8)(AX*8), Y1, Y1
	VMULPD  (SI)(AX*8), Y1, Y1
	VMOVUPD Y1, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     x64_loop

x64_done:
	VZEROUPPER
	RET

// func writeRowAVX32(dx, y, dy []float32, a []float64)
//
// writeRowAVX64 for float32 rows: computed in float64, rounded once.
TEXT ·writeRowAVX32(SB), NOSPLIT, $0-96
	MOVQ dx_base+0(FP), DI
	MOVQ dx_len+8(FP), CX
	MOVQ y_base+24(FP), SI
	MOVQ dy_base+48(FP), DX
	MOVQ a_base+72(FP), R8
	ANDQ $-4, CX
	XORQ AX, AX

x32_loop:
	CMPQ       AX, CX
	JAE        x32_done
	VCVTPS2PD  (DX)(AX*4), Y1
	VSUBPD     (R8)(AX*8), Y1, Y1
	VCVTPS2PD  (SI)(AX*4), Y2
	VMULPD     Y2, Y1, Y1
	VCVTPD2PSY Y1, X1
	VMOVUPS    X1, (DI)(AX*4)
	ADDQ       $4, AX
	JMP        x32_loop

x32_done:
	VZEROUPPER
	RET

