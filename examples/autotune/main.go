// Command autotune picks a configuration with a differentiable argmin over measured costs.
//
//	go run ./examples/autotune
//	go run ./examples/autotune -tau 0.02 -rows 2048
//
// The configuration tuned here is how many rows to hand softmaxjet.Second per call when
// a batch of rows is processed in chunks. Each candidate is timed for real (best of a
// few runs, a few milliseconds in all), and its cost c_i is its time per row divided by
// the best candidate's, so the best costs 1.
//
// From the costs it computes, at a temperature τ:
//
//   - the soft pick p = softmax(−c/τ), graphs.SoftArgmin in a Gorgonia graph, and the
//     expected cost E = Σ_i p_i·c_i with the measured costs held fixed;
//   - the gradient of E in the costs, ∂E/∂c = J·c with J = ∂p/∂c = −(1/τ)(diag p − ppᵀ)
//     the negative softmax Jacobian, computed twice in the same graph: by gorgonia.Grad
//     through SoftArgmin (whose gradient is built from ops.SoftmaxBackward), and by an
//     explicit ops.SoftmaxBackward node scaled by −1/τ;
//   - the hard pick, graphs.Argmin;
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
	"flag"
	"fmt"
	"os"
)

func main() {
	cfg := defaultConfig()
	flag.Float64Var(&cfg.Tau, "tau", cfg.Tau, "temperature τ of the soft pick, in units of the best cost")
	flag.IntVar(&cfg.Rows, "rows", cfg.Rows, "rows in the batch that is timed")
	flag.IntVar(&cfg.K, "K", cfg.K, "atoms per row")
	flag.IntVar(&cfg.P, "P", cfg.P, "output columns per row")
	flag.IntVar(&cfg.Reps, "reps", cfg.Reps, "timed runs per candidate (the best counts)")
	flag.IntVar(&cfg.Steps, "steps", cfg.Steps, "policy-descent steps T")
	flag.Float64Var(&cfg.Damping, "damping", cfg.Damping, "Fisher damping λ of the natural gradient (0: pseudo-inverse, ill-conditioned when some p is tiny)")
	flag.Parse()
	cfg.Out = os.Stdout
	if _, err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "autotune:", err)
		os.Exit(1)
	}
}
