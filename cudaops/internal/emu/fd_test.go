//go:build cgo

package emu

import (
	"github.com/stretchr/testify/require"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// Finite-difference checks of every formula, through the emulated kernels only: each
// derivative kernel must agree with a central difference of the kernel it differentiates.

const fdH = 1e-5

// run64 emulates kernel k on float64 inputs and returns its outputs.
func run64(t *testing.T, k dispatch.Kernel, ints []int, floats []float64, in ...[]float64) [][]float64 {
	t.Helper()
	c := testcase.New(k, dispatch.Float64, ints, newRNG(0, 0))
	c.Floats = floats
	copy(c.F64.In[:], in)
	emulate(t, c, launch.Options{})
	return c.F64.Out[:len(kernel.ID(k).Spec().Out)]
}

func randVec(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

func axpy(x []float64, h float64, d []float64) []float64 {
	y := make([]float64, len(x))
	for i := range x {
		y[i] = x[i] + h*d[i]
	}
	return y
}

func dotv(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// requireFD compares a directional derivative with its central difference.
func requireFD(t *testing.T, what string, analytic, plus, minus []float64) {
	t.Helper()
	fd := make([]float64, len(plus))
	for i := range fd {
		fd[i] = (plus[i] - minus[i]) / (2 * fdH)
	}
	e := testcase.RelErr(analytic, fd)
	require.LessOrEqual(t, e, 1e-6, "%s: finite-difference mismatch %.3g", what, e)
}

// forDeviceGates runs f in a subtest per gate of the table, with the gate's forward and VJP
// kernels by channel; a gate without device kernels (on the CPU only: nothing to emulate) is
// skipped, saying so.
func forDeviceGates(t *testing.T, f func(t *testing.T, fwd, vjp [kernel.NumChannels]dispatch.Kernel)) {
	for _, g := range kernel.Gates() {
		t.Run(g.Name, func(t *testing.T) {
			var ks [2][kernel.NumChannels]dispatch.Kernel
			for i := range ks {
				for c := range kernel.NumChannels {
					id := g.Kernel(c, i == 1)
					if !id.OnDevice() {
						t.Skipf("gate %s runs on the CPU only: no device kernels to emulate", g.Name)
					}
					ks[i][c] = dispatch.Kernel(id)
				}
			}
			f(t, ks[0], ks[1])
		})
	}
}

// TestJetChannelsFiniteDifferences: first = ∂value/∂l, second = ∂first/∂l, hvp = ∂first/∂l·v,
// and the Gauss-Newton slab is Σ_c first·first, for every gate of the table with device kernels.
func TestJetChannelsFiniteDifferences(t *testing.T) {
	rng := newRNG(51, 52)
	forDeviceGates(t, func(t *testing.T, kn, _ [kernel.NumChannels]dispatch.Kernel) {
		value, first, second, hvp := kn[kernel.Value], kn[kernel.First], kn[kernel.Second], kn[kernel.HVP]
		for _, K := range []int{1, 4, 7} {
			const N, P = 2, 3
			ints := []int{N, K, P}
			floats := testcase.New(value, dispatch.Float64, ints, rng).Floats
			l, D, v := randVec(rng, N*K), randVec(rng, N*K*P), randVec(rng, N*K)
			dl := randVec(rng, N*K)
			firstOut := run64(t, first, ints, floats, l, D)[0]
			secondOut := run64(t, second, ints, floats, l, D)[0]
			// value → first: Σ_a first[n][a][c]·dl[n][a]
			want := make([]float64, N*P)
			for n := 0; n < N; n++ {
				for a := 0; a < K; a++ {
					for c := 0; c < P; c++ {
						want[n*P+c] += firstOut[(n*K+a)*P+c] * dl[n*K+a]
					}
				}
			}
			requireFD(t, first.String(), want,
				run64(t, value, ints, floats, axpy(l, fdH, dl), D)[0],
				run64(t, value, ints, floats, axpy(l, -fdH, dl), D)[0])
			// first → second
			want2 := make([]float64, N*K*P)
			for n := 0; n < N; n++ {
				for a := 0; a < K; a++ {
					for b := 0; b < K; b++ {
						for c := 0; c < P; c++ {
							want2[(n*K+a)*P+c] += secondOut[((n*K+a)*K+b)*P+c] * dl[n*K+b]
						}
					}
				}
			}
			requireFD(t, second.String(), want2,
				run64(t, first, ints, floats, axpy(l, fdH, dl), D)[0],
				run64(t, first, ints, floats, axpy(l, -fdH, dl), D)[0])
			// first → hvp along v
			requireFD(t, hvp.String(), run64(t, hvp, ints, floats, l, D, v)[0],
				run64(t, first, ints, floats, axpy(l, fdH, v), D)[0],
				run64(t, first, ints, floats, axpy(l, -fdH, v), D)[0])
			// Gauss-Newton = Σ_c first first
			gn := run64(t, kn[kernel.GaussNewton], ints, floats, l, D)[0]
			for n := 0; n < N; n++ {
				for a := 0; a < K; a++ {
					for b := 0; b < K; b++ {
						x := 0.0
						for c := 0; c < P; c++ {
							x += firstOut[(n*K+a)*P+c] * firstOut[(n*K+b)*P+c]
						}
						require.InDelta(t, x, gn[(n*K+a)*K+b], 1e-13*(1+math.Abs(x)))
					}
				}
			}
		}
	})
}

// TestJetVJPsFiniteDifferences: for every channel X of every gate of the table with device
// kernels and a random upstream G, the VJP kernel's outputs are the gradient of
// ⟨G, X(l, D[, v])⟩: ⟨dL,δl⟩ + ⟨dD,δD⟩ [+ ⟨dV,δv⟩] matches a central difference along
// (δl, δD[, δv]).
func TestJetVJPsFiniteDifferences(t *testing.T) {
	rng := newRNG(53, 54)
	forDeviceGates(t, func(t *testing.T, fwdK, vjpK [kernel.NumChannels]dispatch.Kernel) {
		for ch := range kernel.NumChannels {
			for _, K := range []int{1, 4, 7} {
				const N, P = 2, 3
				ints := []int{N, K, P}
				floats := testcase.New(fwdK[kernel.Value], dispatch.Float64, ints, rng).Floats
				l, D, v := randVec(rng, N*K), randVec(rng, N*K*P), randVec(rng, N*K)
				dl, dD, dv := randVec(rng, N*K), randVec(rng, N*K*P), randVec(rng, N*K)
				hasV := ch.HasV()
				fwd := func(h float64) []float64 {
					if hasV {
						return run64(t, fwdK[ch], ints, floats, axpy(l, h, dl), axpy(D, h, dD), axpy(v, h, dv))[0]
					}
					return run64(t, fwdK[ch], ints, floats, axpy(l, h, dl), axpy(D, h, dD))[0]
				}
				out0 := fwd(0)
				G := randVec(rng, len(out0))
				var grads [][]float64
				if hasV {
					grads = run64(t, vjpK[ch], ints, floats, l, D, v, G)
				} else {
					grads = run64(t, vjpK[ch], ints, floats, l, D, G)
				}
				analytic := dotv(grads[0], dl) + dotv(grads[1], dD)
				if hasV {
					analytic += dotv(grads[2], dv)
				}
				requireFD(t, vjpK[ch].String(), []float64{analytic},
					[]float64{dotv(G, fwd(fdH))}, []float64{dotv(G, fwd(-fdH))})
			}
		}
	})
}

// TestAxisFiniteDifferences: softmax backward is the gradient of ⟨dy, softmax(x)⟩ (and the same
// for log-softmax); the grad kernels are the gradients of ⟨G, dx(y, dy)⟩ in y and dy.
func TestAxisFiniteDifferences(t *testing.T) {
	rng := newRNG(55, 56)
	for _, sh := range [][3]int{{2, 5, 1}, {1, 4, 3}} {
		outer, n, inner := sh[0], sh[1], sh[2]
		size := outer * n * inner
		for _, logY := range []bool{false, true} {
			bk, gk := dispatch.KernelSoftmaxBackward, dispatch.KernelSoftmaxBackwardGrad
			if logY {
				bk, gk = dispatch.KernelLogSoftmaxBackward, dispatch.KernelLogSoftmaxBackwardGrad
			}
			x, dy, dx := randVec(rng, size), randVec(rng, size), randVec(rng, size)
			y := testcase.SoftmaxAlong(x, outer, n, inner, logY)
			grad := run64(t, bk, sh[:], nil, y, dy)[0]
			requireFD(t, bk.String(), []float64{dotv(grad, dx)},
				[]float64{dotv(dy, testcase.SoftmaxAlong(axpy(x, fdH, dx), outer, n, inner, logY))},
				[]float64{dotv(dy, testcase.SoftmaxAlong(axpy(x, -fdH, dx), outer, n, inner, logY))})
			// Double backward: y treated as a free variable.
			G, dY, dDY := randVec(rng, size), randVec(rng, size), randVec(rng, size)
			gg := run64(t, gk, sh[:], nil, y, dy, G)
			phi := func(h float64) []float64 {
				return []float64{dotv(G, run64(t, bk, sh[:], nil, axpy(y, h, dY), axpy(dy, h, dDY))[0])}
			}
			requireFD(t, gk.String(), []float64{dotv(gg[0], dY) + dotv(gg[1], dDY)}, phi(fdH), phi(-fdH))
		}
	}
}

// TestActivationsFiniteDifferences: backward is dy·f', backward_grad is (g·dy·f”, g·f').
func TestActivationsFiniteDifferences(t *testing.T) {
	rng := newRNG(57, 58)
	for _, a := range kernel.Activations {
		act := a.Name
		fk, bk, gk := dispatch.Kernel(a.Kernel(kernel.Forward)), dispatch.Kernel(a.Kernel(kernel.Backward)), dispatch.Kernel(a.Kernel(kernel.BackwardGrad))
		const n = 64
		x := make([]float64, n)
		for i := range x {
			x[i] = 12*rng.Float64() - 6
			if act == "relu" && math.Abs(x[i]) < 1e-3 {
				x[i] = 0.5 // keep away from the kink
			}
		}
		dy, g := randVec(rng, n), randVec(rng, n)
		ones := make([]float64, n)
		for i := range ones {
			ones[i] = 1
		}
		dx := run64(t, bk, []int{n}, nil, x, dy)[0]
		fp, fm := run64(t, fk, []int{n}, nil, axpy(x, fdH, ones))[0], run64(t, fk, []int{n}, nil, axpy(x, -fdH, ones))[0]
		for i := range fp {
			fp[i] *= dy[i]
			fm[i] *= dy[i]
		}
		requireFD(t, bk.String(), dx, fp, fm)
		gg := run64(t, gk, []int{n}, nil, x, dy, g)
		bp := run64(t, bk, []int{n}, nil, axpy(x, fdH, ones), dy)[0]
		bm := run64(t, bk, []int{n}, nil, axpy(x, -fdH, ones), dy)[0]
		for i := range bp {
			bp[i] *= g[i]
			bm[i] *= g[i]
		}
		requireFD(t, gk.String()+" dX", gg[0], bp, bm)
		d1 := run64(t, bk, []int{n}, nil, x, ones)[0]
		for i := range d1 {
			require.InDelta(t, g[i]*d1[i], gg[1][i], 1e-15*(1+math.Abs(g[i])), "%s dDY", gk)
		}
	}
}
