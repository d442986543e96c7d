package golden

import (
	"fmt"
	"slices"

	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// CoordVJP is the upstream gradient G on a coordinate-jet channel and the gradients of
// Σ G⊙channel that torch found for the logits, d0, d1, and (second and HVP only) d2 and
// (HVP only) the direction v.
type CoordVJP struct {
	G       []float64 `json:"g"`
	DLogits []float64 `json:"d_logits"`
	DD0     []float64 `json:"d_d0"`
	DD1     []float64 `json:"d_d1"`
	DD2     []float64 `json:"d_d2,omitempty"`
	DV      []float64 `json:"d_v,omitempty"`
}

// CoordEvidence is the evidence term of graphs.CoordGaussNewtonLogDet on a softmax file's
// rows: LogDet[n] = log det(H_n/σ² + λI) with H the file's Gauss-Newton slabs, σ = exp(LogSigma),
// λ = exp(LogLambda), and the gradients of Σ_n W[n]·LogDet[n] in the logits, d0, d1, the
// inverse temperature, log σ and log λ.
type CoordEvidence struct {
	LogSigma   float64   `json:"log_sigma"`
	LogLambda  float64   `json:"log_lambda"`
	W          []float64 `json:"w"`
	LogDet     []float64 `json:"logdet"`
	DLogits    []float64 `json:"d_logits"`
	DD0        []float64 `json:"d_d0"`
	DD1        []float64 `json:"d_d1"`
	DInvTau    float64   `json:"d_inv_tau"`
	DLogSigma  float64   `json:"d_log_sigma"`
	DLogLambda float64   `json:"d_log_lambda"`
}

// CoordJet is one coord_jet_*.json.gz file: N rows of the coordinate jet over the 2K primaries
// (K logits, then K latent coordinates) of a softmax gate (Gate "softmax", InvTau) or a
// logistic one (Gate "logistic", Alpha and Beta), with every channel and its VJPs, in the
// layouts of softmaxjet.CoordFirst and its siblings:
//
//	logits [N,K]   d0, d1, d2 [N,K,P]   v [N,2K]
//	first, hvp [N,2K,P]   second [N,2K,2K,P]   gauss_newton [N,2K,2K]
type CoordJet struct {
	Header
	Gate   string    `json:"gate"`
	N      int       `json:"N"`
	K      int       `json:"K"`
	P      int       `json:"P"`
	InvTau float64   `json:"inv_tau,omitempty"`
	Alpha  []float64 `json:"alpha,omitempty"`
	Beta   []float64 `json:"beta,omitempty"`

	Logits      []float64 `json:"logits"`
	D0          []float64 `json:"d0"`
	D1          []float64 `json:"d1"`
	D2          []float64 `json:"d2"`
	V           []float64 `json:"v"`
	First       []float64 `json:"first"`
	Second      []float64 `json:"second"`
	HVP         []float64 `json:"hvp"`
	GaussNewton []float64 `json:"gauss_newton"`

	FirstVJP       CoordVJP `json:"first_vjp"`
	SecondVJP      CoordVJP `json:"second_vjp"`
	HVPVJP         CoordVJP `json:"hvp_vjp"`
	GaussNewtonVJP CoordVJP `json:"gauss_newton_vjp"`

	Evidence *CoordEvidence `json:"evidence,omitempty"` // softmax files only
}

// CoordJets reads every coord_jet_*.json.gz of dir.
func CoordJets(dir string) ([]*CoordJet, error) { return load[CoordJet](dir, "coord_jet_*.json.gz") }

func (j *CoordJet) check() error {
	if j.N < 1 || j.K < 1 || j.P < 1 || j.N > 1<<10 || j.K > 1<<10 || j.P > 1<<10 {
		return fmt.Errorf("bad shape N=%d K=%d P=%d", j.N, j.K, j.P)
	}
	var gate []field
	switch j.Gate {
	case "softmax":
		if !(j.InvTau > 0) || j.Alpha != nil || j.Beta != nil || j.Evidence == nil {
			return fmt.Errorf("softmax gate: want inv_tau > 0, no alpha, beta and an evidence; got %v, %v, %v, %v", j.InvTau, j.Alpha, j.Beta, j.Evidence != nil)
		}
		e := j.Evidence
		gate = []field{{"evidence.w", e.W, j.N}, {"evidence.logdet", e.LogDet, j.N}, {"evidence.d_logits", e.DLogits, j.N * j.K},
			{"evidence.d_d0", e.DD0, j.N * j.K * j.P}, {"evidence.d_d1", e.DD1, j.N * j.K * j.P},
			{"evidence scalars", []float64{e.LogSigma, e.LogLambda, e.DInvTau, e.DLogSigma, e.DLogLambda}, 5}}
	case "logistic":
		if j.InvTau != 0 || j.Evidence != nil {
			return fmt.Errorf("logistic gate with inv_tau %v or an evidence (%v)", j.InvTau, j.Evidence != nil)
		}
		gate = []field{{"alpha", j.Alpha, j.K}, {"beta", j.Beta, j.K}}
	default:
		return fmt.Errorf("unknown gate %q", j.Gate)
	}
	K2 := 2 * j.K
	nk, nkp, n2k, n2kp, n4k, n4kp := j.N*j.K, j.N*j.K*j.P, j.N*K2, j.N*K2*j.P, j.N*K2*K2, j.N*K2*K2*j.P
	fs := append(gate,
		field{"logits", j.Logits, nk}, field{"d0", j.D0, nkp}, field{"d1", j.D1, nkp}, field{"d2", j.D2, nkp},
		field{"v", j.V, n2k}, field{"first", j.First, n2kp}, field{"second", j.Second, n4kp},
		field{"hvp", j.HVP, n2kp}, field{"gauss_newton", j.GaussNewton, n4k})
	for _, v := range []struct {
		name   string
		vjp    *CoordVJP
		g      int
		d2, dv int
	}{
		{"first_vjp", &j.FirstVJP, n2kp, 0, 0},
		{"second_vjp", &j.SecondVJP, n4kp, nkp, 0},
		{"hvp_vjp", &j.HVPVJP, n2kp, nkp, n2k},
		{"gauss_newton_vjp", &j.GaussNewtonVJP, n4k, 0, 0},
	} {
		fs = append(fs, field{v.name + ".g", v.vjp.G, v.g}, field{v.name + ".d_logits", v.vjp.DLogits, nk},
			field{v.name + ".d_d0", v.vjp.DD0, nkp}, field{v.name + ".d_d1", v.vjp.DD1, nkp},
			field{v.name + ".d_d2", v.vjp.DD2, v.d2}, field{v.name + ".d_v", v.vjp.DV, v.dv})
	}
	return checkFields(fs)
}

// Cases returns a Case for each of the gate's four coordinate-jet kernels (first, second, HVP,
// Gauss-Newton; kernel.Gate.CoordKernel) on the file's data, with the gate's floats.
func (j *CoordJet) Cases() []Case {
	g, floats := kernel.SoftmaxGate, []float64{j.InvTau}
	if j.Gate == "logistic" {
		g, floats = kernel.LogisticGate, append(slices.Clone(j.Alpha), j.Beta...)
	}
	ints := []int{j.N, j.K, j.P}
	l, d0, d1, d2 := j.Logits, j.D0, j.D1, j.D2
	list := []struct {
		c    kernel.Channel
		in   [][]float64
		want []float64
	}{
		{kernel.First, [][]float64{l, d0, d1}, j.First},
		{kernel.Second, [][]float64{l, d0, d1, d2}, j.Second},
		{kernel.HVP, [][]float64{l, d0, d1, d2, j.V}, j.HVP},
		{kernel.GaussNewton, [][]float64{l, d0, d1}, j.GaussNewton},
	}
	out := make([]Case, len(list))
	for i, c := range list {
		out[i] = newCase(j.File, dispatch.Kernel(g.CoordKernel(c.c)), ints, floats, c.in, [][]float64{c.want})
	}
	return out
}
