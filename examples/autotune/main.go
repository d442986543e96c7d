// Command autotune picks a configuration with a differentiable argmin over measured costs.
//
//	go run ./examples/autotune
//	go run ./examples/autotune -tau 0.02 -rows 2048
//
// The configuration tuned here is how many rows to hand softmaxjet.Softmax.Second per call when
// a batch of rows is processed in chunks. Each candidate is timed for real, -reps rounds
// (61, about a tenth of a second in all) each of which times every candidate once, in turn,
// starting one candidate further on each round, so that a slow spell of a shared machine
// spoils a sample of every candidate rather than all of one's. A candidate's cost c_i is its
// median time per row divided by the fastest median, so the fastest costs 1; the output
// gives each candidate's median, interquartile range and extremes.
//
// The pick: a candidate ties with the fastest median when its median is above it by no
// more than the fastest median's noise (the half-width of its box-plot notch, 1.58·IQR/√n,
// about a 95 % confidence interval) and at least -tie (5 %); ties go to the larger rows per
// call. Choosing the fastest by one measurement flipped between near-equal candidates from
// run to run (32, 512 and 128 rows per call in three runs on a shared two-core machine);
// the tie rule makes the pick the same whenever the measurements cannot tell the
// candidates apart.
//
// From the costs it computes, at a temperature τ:
//
//   - the soft pick p = softmax(−c/τ), graphs.SoftArgmin in a Gorgonia graph, and the
//     expected cost E = Σ_i p_i·c_i with the measured costs held fixed;
//   - the gradient of E in the costs, ∂E/∂c = J·c with J = ∂p/∂c = −(1/τ)(diag p − ppᵀ)
//     the negative softmax Jacobian, computed twice in the same graph: by gorgonia.Grad
//     through SoftArgmin (whose gradient is built from ops.SoftmaxBackward), and by an
//     explicit ops.SoftmaxBackward node scaled by −1/τ;
//   - the hard pick, graphs.Argmin of the costs (the fastest median);
//   - the natural gradient of E in the policy's logits θ = −c/τ: the plain gradient
//     g = (diag p − ppᵀ)·c preconditioned by the inverse Fisher information of the
//     categorical distribution, graphs.NaturalGradient. Where the plain gradient of an
//     unlikely configuration is scaled down by its tiny p_i, the natural gradient moves
//     every logit by its cost's distance from the mean, c_i − c̄, whatever p_i is.
//
// Finally it runs T natural-gradient steps θ ← θ − η·F⁺g from the uniform policy with
// η = 1/(τT), and the same steps with the plain gradient: the natural steps land on the
// soft pick p exactly (each one multiplies p by exp(−η·c)), the plain ones fall short.
package main

import (
	"io"
	"os"

	"github.com/gatejet/gatejet/internal/exampleutil"
)

func main() {
	var cfg Config
	exampleutil.Main(op, func() (err error) {
		cfg, err = parseFlags(os.Args[1:], os.Stderr)
		return err
	}, func() error {
		cfg.Out = exampleutil.Stdout
		_, err := run(cfg)
		return err
	})
}

// about is what the command does, in its usage.
const about = "Times chunk sizes of softmaxjet.Softmax.Second and picks one with a differentiable argmin (graphs.SoftArgmin) over the measured costs."

// parseFlags reads the command line into a Config, starting from defaultConfig.
func parseFlags(args []string, errOut io.Writer) (Config, error) {
	cfg := defaultConfig()
	fs := exampleutil.FlagSet(op, about, errOut)
	fs.Var(exampleutil.FloatFlag(&cfg.Tau), "tau", "temperature `τ` of the soft pick, in units of the best cost")
	fs.IntVar(&cfg.Rows, "rows", cfg.Rows, "rows in the batch that is timed")
	fs.IntVar(&cfg.K, "K", cfg.K, "atoms per row")
	fs.IntVar(&cfg.P, "P", cfg.P, "output columns per row")
	fs.IntVar(&cfg.Reps, "reps", cfg.Reps, "timing rounds, each timing every candidate once (the medians count)")
	fs.Var(exampleutil.FloatFlag(&cfg.TieFloor), "tie", "medians within this `fraction` of the fastest (or within its noise, if more) tie; ties go to the larger rows per call")
	fs.IntVar(&cfg.Steps, "steps", cfg.Steps, "policy-descent steps T")
	fs.Var(exampleutil.FloatFlag(&cfg.Damping), "damping", "Fisher damping `λ` of the natural gradient (0: pseudo-inverse, ill-conditioned when some p is tiny)")
	return cfg, exampleutil.Parse(fs, args)
}
