package softmaxjet

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// fuzzReader turns fuzz bytes into sizes and values, with a bias towards the awkward ones.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	x := r.b[0]
	r.b = r.b[1:]
	return x
}

func (r *fuzzReader) float() float64 {
	switch k := r.byte(); k % 16 {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return math.Inf(-1)
	case 3:
		return 1e300
	case 4:
		return -1e-300
	case 5:
		return 1e4
	default:
		var buf [2]byte
		buf[0], buf[1] = r.byte(), r.byte()
		return float64(int16(binary.LittleEndian.Uint16(buf[:]))) / 4096
	}
}

// FuzzJetKernels: arbitrary shapes, temperatures and values never panic; invalid shapes are
// errors; on finite inputs of moderate size the outputs are finite, second is exactly
// symmetric, and the rows of first and second sum to zero.
func FuzzJetKernels(f *testing.F) {
	f.Add([]byte{2, 3, 4, 100, 7, 9, 200, 13, 40, 50, 60, 70, 80, 90})
	f.Add([]byte{0, 1, 1, 0})
	f.Add([]byte{1, 17, 2, 255, 0, 1, 2, 3, 4, 5, 6})
	f.Add([]byte{3, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{b: data}
		sh := Shape{N: int(r.byte()%5) - 1 + 1, K: int(r.byte() % 20), P: int(r.byte() % 7)}
		var invTau float64
		switch k := r.byte(); k % 8 {
		case 0:
			invTau = 0
		case 1:
			invTau = math.NaN()
		case 2:
			invTau = -1
		case 3:
			invTau = 1e3
		case 4:
			invTau = 1e-3
		case 5:
			// The largest accepted, or past it (refused), as the next byte says.
			invTau = []float64{gatejet.MaxInvTau, math.Nextafter(gatejet.MaxInvTau, math.Inf(1)), 1e200, math.MaxFloat64}[r.byte()%4]
		default:
			invTau = float64(k) / 64
		}
		if err := sh.Check("fuzz"); err != nil {
			if (Softmax[float64]{InvTau: invTau}).First(nil, nil, nil, sh) == nil {
				t.Fatalf("invalid shape %+v accepted", sh)
			}
			return
		}
		l, d, v := make([]float64, sh.LogitsLen()), make([]float64, sh.DecodedLen()), make([]float64, sh.LogitsLen())
		finite := true
		for _, s := range [][]float64{l, d, v} {
			for i := range s {
				s[i] = r.float()
				finite = finite && !math.IsNaN(s[i]) && !math.IsInf(s[i], 0) && math.Abs(s[i]) <= 1e4
			}
		}
		first, second := make([]float64, sh.FirstLen()), make([]float64, sh.SecondLen())
		hvp, gn := make([]float64, sh.FirstLen()), make([]float64, sh.GNLen())
		dl, dd, dv := make([]float64, sh.LogitsLen()), make([]float64, sh.DecodedLen()), make([]float64, sh.LogitsLen())
		errs := []error{
			Softmax[float64]{InvTau: invTau}.First(first, l, d, sh),
			Softmax[float64]{InvTau: invTau}.Second(second, l, d, sh),
			Softmax[float64]{InvTau: invTau}.HVP(hvp, l, d, v, sh),
			Softmax[float64]{InvTau: invTau}.GaussNewton(gn, l, d, sh),
			Softmax[float64]{InvTau: invTau}.SecondVJP(dl, dd, l, d, second, sh),
			Softmax[float64]{InvTau: invTau}.HVPVJP(dl, dd, dv, l, d, v, hvp, sh),
			Softmax[float64]{InvTau: invTau}.GaussNewtonVJP(dl, dd, l, d, gn, sh),
		}
		validTau := check.InvTau("", invTau) == nil
		for i, err := range errs {
			if (err == nil) != validTau {
				t.Fatalf("kernel %d: invTau=%v err=%v", i, invTau, err)
			}
		}
		if !validTau || !finite {
			return
		}
		fuzzExtremes(t, sh, l, d, v)
		K, P := sh.K, sh.P
		// Σ_b second[a][b][c] = −s²ζ_a·Σ_b ζ_b e[b][c], and Σ_b ζ_b e[b][c] vanishes up to the
		// rounding of ẑ_c, which is relative to |D|, not to the (possibly tiny) entries.
		scale := 0.0
		for _, x := range d {
			scale = math.Max(scale, math.Abs(x))
		}
		scale *= invTau * invTau
		for _, x := range second {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("non-finite second for finite input")
			}
		}
		for _, s := range [][]float64{first, hvp, gn} {
			for _, x := range s {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("non-finite output for finite input")
				}
			}
		}
		// The VJPs take the channels above as their upstream gradients, which at s = 1e100 are
		// of order s²·|D|²: composed with the VJPs' own s³ their exact values can pass
		// float64's range, and ±Inf is then the rounded result. They must be finite wherever a
		// bound on their exact magnitude is inside the range.
		maxAbs := func(ss ...[]float64) float64 {
			m := 0.0
			for _, s := range ss {
				for _, x := range s {
					m = math.Max(m, math.Abs(x))
				}
			}
			return m
		}
		bound := math.Pow(math.Max(invTau, 1), 3) * (1 + maxAbs(second, hvp, gn)) *
			math.Pow(1+2*maxAbs(d), 2) * (1 + 2*maxAbs(v)) * float64(K*K*P)
		if bound < 1e300 {
			for _, s := range [][]float64{dl, dd, dv} {
				for _, x := range s {
					if math.IsNaN(x) || math.IsInf(x, 0) {
						t.Fatalf("non-finite VJP for finite input (magnitude bound %g)", bound)
					}
				}
			}
		}
		for n := 0; n < sh.N; n++ {
			for a := 0; a < K; a++ {
				for c := 0; c < P; c++ {
					sum := 0.0
					for b := 0; b < K; b++ {
						x := second[((n*K+a)*K+b)*P+c]
						if x != second[((n*K+b)*K+a)*P+c] {
							t.Fatalf("second not symmetric")
						}
						sum += x
					}
					if math.Abs(sum) > 1e-14*scale*float64(K*K) {
						t.Fatalf("Σ_b second = %g (scale %g)", sum, scale)
					}
				}
			}
		}
	})
}

// fuzzExtremes: with inputs of magnitude at most 8, every channel and VJP (upstream gradients
// taken from the same values) is finite at the extreme accepted temperatures.
func fuzzExtremes(t *testing.T, sh Shape, l, d, v []float64) {
	if sh.N == 0 {
		return
	}
	for _, x := range [][]float64{l, d, v} {
		for _, y := range x {
			if math.Abs(y) > 8 {
				return
			}
		}
	}
	cyc := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = d[i%len(d)] - v[i%len(v)]
		}
		return out
	}
	in := limitInputs[float64]{l, d, v, cyc(sh.ValueLen()), cyc(sh.FirstLen()), cyc(sh.SecondLen()), cyc(sh.GNLen())}
	for _, s := range []float64{gatejet.MaxInvTau, 1e-300} {
		for _, o := range runAll(t, sh, gateArg{s: s}, in) {
			for i, x := range o.data {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("s=%g %+v: %s[%d] = %v from finite input", s, sh, o.name, i, x)
				}
			}
		}
	}
}
