// Package softmaxjet computes the order-2 jet of a softmax-gated reconstruction on plain
// slices: exact closed forms for every channel and vector-Jacobian product. It does not import
// Gorgonia.
//
// # The model
//
// One row gates K atoms with logits l[K] at inverse temperature s = 1/τ and reconstructs P
// output columns from the atoms' decoded values D[K][P]:
//
//	ζ = softmax(s·l),   ẑ_c = Σ_k ζ_k·D[k][c],   e[a][c] = D[a][c] − ẑ_c.
//
// Its jet in the logits has closed forms that cost what they write:
//
//	first[a][c]     = ∂ẑ_c/∂l_a       = s·ζ_a·e[a][c]                                  O(K·P)
//	second[a][b][c] = ∂²ẑ_c/∂l_a∂l_b  = s²·(δ_ab·ζ_a·e[a][c] − ζ_a·ζ_b·(e[a][c]+e[b][c]))  O(K²·P)
//
// and the products second-order methods need never build second at all:
//
//	HVP          (second·v)[a][c] = s²·ζ_a·(e[a][c]·(v_a − v̄) − w_c)                   O(K·P)
//	Gauss-Newton H[a][b] = Σ_c first[a][c]·first[b][c] = s²·ζ_a·ζ_b·⟨e[a], e[b]⟩          O(K²·P)
//
// with v̄ = Σ_b ζ_b v_b and w_c = Σ_b ζ_b (v_b − v̄) e[b][c]. Reverse mode through each of
// them (ValueVJP, FirstVJP, SecondVJP, HVPVJP, GaussNewtonVJP) costs the same order as the
// forward channel: the gradient of first is the second channel contracted with the upstream
// gradient, and the gradient of second is a third-order contraction done in one pass over the
// upstream gradient, with nothing of size K³. The derivations are in docs/math.md.
//
// Each channel and its VJP is a method of the gate: Softmax{InvTau: s} for the softmax gate,
// Logistic{Alpha, Beta} for the per-atom logistic gate ζ_k = σ(α_k·l_k + β_k), whose jet is
// diagonal. For a batch of float64 rows:
//
//	err := softmaxjet.Softmax[float64]{InvTau: s}.Second(second, logits, decoded, sh)
//
// Gate is the ten kernels of one gate as one type, which both implement, so code that runs a
// channel for any gate (the ops, gatejet's kernel table) is written once; a new gate
// implements it (docs/adding-a-gate.md).
//
// # Latent coordinates
//
// When each atom k also has a latent coordinate t_k and its decoded row is a function of it,
// the row's primaries are p = (ℓ_1..ℓ_K, t_1..t_K). CoordFirst, CoordSecond,
// CoordGaussNewton and CoordHVP take the decoded rows d0 and their first and second
// derivatives in t, d1 and d2 (each [N,K,P], from any basis), and write the same channels
// over the 2K primaries: first [N,2K,P], second [N,2K,2K,P], the slabs [N,2K,2K] and the HVP
// [N,2K,P] for v [N,2K]. The ℓ blocks are the gate's own channels over d0 (the same bits);
// the mixed blocks are ∂ζ_k/∂ℓ_a·d1[k] and the tt block is diagonal, ζ_k·d2[k]. They take the
// gate as an argument, for example
//
//	err := softmaxjet.CoordSecond[float64](softmaxjet.Softmax[float64]{InvTau: s}, second, logits, d0, d1, d2, sh)
//
// and run the built-in gates' own rows, at the cost per output element of their channels;
// any other Gate runs through its methods (ζ and ∂ζ/∂ℓ from Value and First on identity
// decoded rows), chunk by chunk. Converting a gate value to Gate[T] stores it on the heap:
// a gate held in a Gate[T] variable is used call after call without allocating.
//
// The seed algorithm builds the same channels from K exp-jets each carrying a K×K Hessian,
// O(K³·P) per row. gatejet keeps it, outside its API, as an independent order-2 Taylor tower
// that the tests hold the closed forms to at 1e-13.
//
// # Layout and numerics
//
// Batches are row-major with rows stacked (see Shape): logits [N,K], decoded [N,K,P],
// first [N,K,P], second [N,K,K,P] with second[(a·K+b)·P+c] per row, as in the seed.
// Outputs are overwritten. Every kernel works for float32 and float64; the per-row gate and
// reductions are computed in float64. Each output is rounded once, except that the float32
// second channel computes its blocks in float32 when the row's values are safely in range
// (tested within 1e-5 relative of float64).
//
// Exponents are max-subtracted, so logits offset by ±1e4 or scaled by s = 1e3 give finite,
// correct channels. The softmax gate's exponential is the package's own (the fdlibm reduction
// and polynomial, within 1 ulp of eˣ), so that its AVX2 version computes the same bits as its
// Go version; the jet tower the closed forms are tested against uses math.Exp. Non-finite
// data propagate within their own row, as a softmax does: a NaN
// logit or a row of all −Inf logits gives a NaN row; −Inf logits beside finite ones mask their
// atoms (ζ = 0). Other rows are never touched. Structural problems — shapes, buffer sizes,
// an inverse temperature outside (0, gatejet.MaxInvTau], gate parameters, an output that
// shares memory with another argument — are *gatejet.Error values matching
// gatejet.ErrShape, ErrSize, ErrTemperature, ErrParam or ErrNonFinite.
//
// # Accepted parameters and sizes
//
// The channels and their reverse modes scale as s, s² and s³ (SecondVJP, HVPVJP and
// GaussNewtonVJP reach s³), so the inverse temperature is bounded: 0 < s ≤ gatejet.MaxInvTau
// = 1e100, where s³ ≤ 1e300. Within it, finite inputs of moderate size give finite outputs:
// a gate made one-hot by a large s gives the exact limit, zero for every derivative; tied
// logits, whose gate stays spread at any s, give s^k times the values at s = 1; a tiny s
// (1e-300) gives the uniform gate, and derivatives that underflow to 0 as they should.
// Likewise the logistic slope: |α| ≤ gatejet.MaxLogisticAlpha = 1e100 (ErrParam beyond,
// ErrNonFinite for ±Inf or NaN). Float32 outputs are the float64 results rounded once, so
// outputs whose scale s^k·|data| passes float32's range (3.4e38) round to ±Inf, never NaN.
//
// No call allocates more than gatejet.MaxBytes in one buffer, checked before allocating: a
// kernel's per-row workspace (ErrSize, naming "shape"). Outputs may not overlap the inputs or
// each other (ErrParam, naming the output): the kernels read their inputs while they write,
// from several goroutines.
//
// Rows are spread over the cores in fixed chunks past a measured break-even; each row is
// computed by one goroutine with the same code, so results are bit-identical whatever the
// core count. Steady-state calls allocate nothing (tested with testing.AllocsPerRun). On amd64 with AVX2 the inner loops run
// in assembly that performs the same operations in the same order as the Go loops, so the
// results are the same bits (tested); the purego build tag selects the Go loops.
package softmaxjet
