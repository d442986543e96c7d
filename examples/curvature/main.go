// Command curvature trains a softmax-gated reconstruction model whose loss needs the
// second-order jet of the gate: the Laplace evidence of each row's gate logits.
//
//	go run ./examples/curvature            # defaults: about 5.5 s on two idle cores once built
//	go run ./examples/curvature -h         # the flags
//
// # The model
//
// Each row has an input x (d numbers) and a target y (P numbers). The model maps the input
// to K gate logits with a learned linear map, gates K atoms with a softmax at a fixed
// temperature τ, and reconstructs the target from the atoms' learned decoded values D
// (K×P, shared by every row):
//
//	l = x·W + b,    ẑ = Σ_k softmax(l/τ)_k · D[k]
//
// The data are generated (seeded, so runs repeat) by a model of the same form with other
// parameters, plus Gaussian noise of standard deviation σ (-noise).
//
// # The loss
//
// Per row, with H the K×K Gauss-Newton slab of the reconstruction in the logits,
// H[a][b] = Σ_c ∂ẑ_c/∂l_a · ∂ẑ_c/∂l_b (graphs.GaussNewtonSlabs),
//
//	loss = mean over rows of  ‖y − ẑ‖²/(2σ²)  +  ½·log det(I + H/(σ²λ))
//	                          └── fit ──────┘    └── curvature term ─────┘
//
// which is the negative log evidence of a Laplace approximation in which each row's gate
// logits are a latent variable with a Gaussian prior of precision λ centred on the linear
// map's prediction. The curvature term is the Occam factor: the number of nats by which
// the row's data sharpen the posterior over its gate logits. It charges the model for
// every gate direction the reconstruction is sensitive to, so it favours gates that commit
// to an atom (a one-hot gate has a flat reconstruction) and atoms that need no fine
// balancing, unless the fit pays for the sensitivity: a regulariser against gates that
// are balanced on a knife-edge. It is ½·(log det(H + σ²λI) − K·log σ²λ), computed by
// graphs.GaussNewtonLogDet; its gradient runs through LogDetPlusRidge ((H + σ²λI)⁻¹) and
// then through the vector-Jacobian product of the Gauss-Newton slabs, which needs the
// second derivatives of the softmax gate: Gorgonia's own autodiff cannot produce them.
//
// Everything is one Gorgonia graph (gatejet ops and Gorgonia's matmul, broadcast add,
// reshape, square and mean), differentiated with gorgonia.Grad, run by a TapeMachine and
// trained with Gorgonia's Adam solver on mini-batches until the epoch loss settles.
//
// # Output
//
// A progress bar on stderr when stderr is a terminal (a redirected stderr gets one plain
// line instead of the bar's carriage-return frames), one line per epoch on stdout (loss,
// curvature term, reconstruction error, rows/s), and in -out (default out/curvature/):
// loss.png, the loss curves, and loss.csv, the same numbers.
//
// -gpu off|auto|required sets cudaops.SetMode (its default is the mode the GATEJET_GPU
// environment variable chose, auto when unset). The default build has no GPU backend, so
// auto runs on the CPU and required fails with a message and exit status 1 (see
// docs/gpu.md for the gatejetcuda build tag).
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
		cfg.Stdout, cfg.Stderr = exampleutil.Stdout, os.Stderr
		_, err := run(cfg)
		return err
	})
}

// parseFlags reads the command line into a Config, starting from defaultConfig.
func parseFlags(args []string, errOut io.Writer) (Config, error) {
	cfg := defaultConfig()
	fs := exampleutil.FlagSet("curvature", about, errOut)
	fs.IntVar(&cfg.N, "n", cfg.N, "rows of generated training data")
	fs.IntVar(&cfg.D, "d", cfg.D, "input dimension")
	fs.IntVar(&cfg.K, "K", cfg.K, "atoms (gate logits per row)")
	fs.IntVar(&cfg.P, "P", cfg.P, "output columns per row")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "rows per mini-batch")
	fs.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "most epochs (training stops earlier once the loss settles)")
	fs.Var(exampleutil.FloatFlag(&cfg.Tau), "tau", "gate temperature `τ` (fixed)")
	fs.Var(exampleutil.FloatFlag(&cfg.Lambda), "lambda", "prior precision `λ` of the gate logits (ridge σ²λ of the log-det)")
	fs.Var(exampleutil.FloatFlag(&cfg.Noise), "noise", "noise standard deviation `σ` of the data and the likelihood")
	fs.Var(exampleutil.FloatFlag(&cfg.LearnRate), "lr", "Adam learning `rate`")
	fs.Var(exampleutil.FloatFlag(&cfg.Settle), "settle", "stop when the epoch loss changes by less than this `fraction` for 3 epochs in a row (0: never)")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the generated data, the initial parameters and the batch order")
	fs.StringVar(&cfg.Out, "out", cfg.Out, "directory for loss.png and loss.csv")
	fs.StringVar(&cfg.GPU, "gpu", cfg.GPU, "GPU use: off, auto or required (cudaops.SetMode; the default comes from $GATEJET_GPU)")
	return cfg, exampleutil.Parse(fs, args)
}

// about is what the command does, in its usage.
const about = "Trains a softmax-gated reconstruction with a Laplace-evidence curvature term."
