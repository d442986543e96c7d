// Command digits fits a softmax-gated reconstruction with latent coordinates to the UCI
// handwritten digits (testdata/digits: 1,797 images of 8×8 pixels) twice: once with the codes
// fitted by Gauss-Newton steps on the coordinate jet, once first-order only (Adam), and
// compares them on held-out images.
//
//	go run ./examples/digits            # defaults: well under a minute on two cores once built
//	go run ./examples/digits -quick     # a smaller grid and fewer iterations
//	go run ./examples/digits -h         # the flags
//
// # The model
//
// Each image x_n (64 pixels scaled to [0, 1]) is reconstructed from K atoms. Atom k decodes a
// latent coordinate t ∈ [0, 1] into an image with a cubic B-spline in t, d_k(t) = Σ_b Φ_b(t)·
// B[k][b] (L basis functions on uniform clamped knots); a softmax gate over the row's logits
// ℓ_n mixes the atoms, each at the row's own coordinate:
//
//	ẑ_n = Σ_k softmax(ℓ_n/τ)_k · d_k(t_nk),      codes p_n = (ℓ_n, t_n) ∈ R^2K
//
// Each row's codes have the prior N(p₀, I/λ) (p₀: logits 0, coordinates ½) and the pixels
// Gaussian noise σ, so fitting the codes minimises, per row,
//
//	E_n = ½‖ẑ_n − x_n‖² + ½σ²λ‖p_n − p₀‖².
//
// # The two ways of fitting it
//
// Gauss-Newton: each iteration takes one Levenberg–Marquardt step on every row's codes: the
// coordinate jet's first channel F = ∂ẑ/∂p [2K,P] and Gauss-Newton slab H = F·Fᵀ [2K,2K]
// (softmaxjet.CoordFirst and softmaxjet.CoordGaussNewton), and the 2K×2K system
// (H + (σ²λ + μ)I)·δ = −(F·r + σ²λ(p − p₀)) solved by a Cholesky factorisation (gonum's
// lapack64), the damping μ adapted per row and a step kept only where it lowers the row's
// objective; then -decoder-steps Adam steps on the decoder B along the gradient of the fit,
// which a Gorgonia graph computes (graphs.BSplineJets for the decoded rows,
// ops.SoftmaxJetValue for ẑ, gorgonia.Grad).
//
// Adam: the same graph with the codes learned too, one Adam step on codes and decoder per
// iteration: the first-order baseline.
//
// Both start from the same decoder (each atom's spline through random training images) and
// the same codes (-init match: each atom at the grid coordinate whose image is nearest the
// row, the logits its standardised distances, negated). Held-out images keep the decoder
// fixed and fit only their codes, from the same start, each method with its own steps, as many
// as it trained with; the last row of the table fits them by Gauss-Newton steps on Adam's
// decoder, which separates the two code fits from the two decoders.
//
// # Choosing τ and λ by the evidence
//
// Before the comparison, the Gauss-Newton fit runs for every temperature τ (-taus) and prior
// precision λ (-lambdas) on the training images less a validation set (-val), and scores each
// pair by the Laplace approximation of the log evidence per image at the fitted codes,
//
//	log Z_n = −‖r_n‖²/2σ² − (P/2)·log 2πσ² − ½λ‖p_n − p₀‖² + K·log λ − ½·log det(H_n/σ² + λI),
//
// the last term (the Occam factor) from each row's Gauss-Newton slab over the 2K codes
// (graphs.CoordGaussNewtonLogDet in a Gorgonia graph; the test holds it to a per-row Cholesky
// factorisation). It is printed beside the validation error of the same fit (codes fitted on
// the validation images, decoder fixed), the choice a grid search on held-out data would make.
// Then -tune rounds of gradient ascent of the evidence in log(1/τ) and log λ (the graph's
// gradient, exact, with the codes refitted by three Gauss-Newton steps after each move, the
// decoder that of the grid's fit) refine the evidence's choice, and the comparison uses it.
// The temperature is learned from the evidence and not from the fit: with free per-row
// logits, ℓ/τ is what the fit sees, so τ matters only through the prior on ℓ, which the
// evidence weighs and the fit alone does not (a lower fit error always wants a weaker prior).
// σ is fixed (-noise).
//
// # Output
//
// The grid and the comparison table on stdout (held-out error, training error, wall time to a
// target training error: -target, by default the larger of the two methods' final errors),
// and in -out (default out/digits/): reconstructions.png (held-out images: originals, then the
// Gauss-Newton and the Adam reconstructions, one digit of each class), curves.png (training
// error against iterations, left, and against seconds, right, on a log scale, with the target
// dashed; titled, labelled, with a legend), curves.csv (the same numbers) and grid.csv (the
// evidence and validation error of each τ, λ, and of the ascent's end). A progress bar is
// drawn while stdout is a terminal.
package main

import (
	"flag"
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
		cfg.Stdout = exampleutil.Stdout
		if exampleutil.IsTerminal(os.Stdout) {
			cfg.Progress = exampleutil.Stdout
		}
		_, err := run(cfg)
		return err
	})
}

// parseFlags reads the command line into a Config, starting from defaultConfig (and from
// quickConfig's values, for the flags not given, with -quick).
func parseFlags(args []string, errOut io.Writer) (Config, error) {
	cfg := defaultConfig()
	fs := exampleutil.FlagSet("digits", about, errOut)
	fs.IntVar(&cfg.K, "k", cfg.K, "atoms `K` (gate logits and coordinates per image)")
	fs.IntVar(&cfg.Basis, "basis", cfg.Basis, "cubic B-spline basis functions per atom (≥ 4)")
	fs.IntVar(&cfg.Iters, "iters", cfg.Iters, "Gauss-Newton iterations (and the Adam iterations it is compared with at equal count)")
	fs.IntVar(&cfg.AdamIters, "adam-iters", cfg.AdamIters, "Adam iterations of the first-order run (≥ -iters)")
	fs.IntVar(&cfg.GridIters, "grid-iters", cfg.GridIters, "Gauss-Newton iterations of each fit of the τ, λ grid")
	fs.IntVar(&cfg.DecoderSteps, "decoder-steps", cfg.DecoderSteps, "Adam steps on the decoder per Gauss-Newton iteration")
	fs.IntVar(&cfg.Tune, "tune", cfg.Tune, "rounds of gradient ascent of the evidence in τ and λ from the grid's choice (0: the grid's choice)")
	fs.Var(floatList(&cfg.Taus), "taus", "temperatures `τ,...` of the grid")
	fs.Var(floatList(&cfg.Lambdas), "lambdas", "prior precisions `λ,...` of the codes in the grid")
	fs.Var(exampleutil.FloatFlag(&cfg.Noise), "noise", "pixel noise `σ` (pixels scaled to [0, 1])")
	fs.Var(exampleutil.FloatFlag(&cfg.LR), "lr", "Adam learning `rate` of the decoder (both methods)")
	fs.Var(exampleutil.FloatFlag(&cfg.CodeLR), "code-lr", "Adam learning `rate` of the codes (the first-order run)")
	fs.IntVar(&cfg.Rows, "rows", cfg.Rows, "images used, a seeded random choice of the 1,797 (0: all)")
	fs.IntVar(&cfg.Test, "test", cfg.Test, "held-out test images")
	fs.IntVar(&cfg.Val, "val", cfg.Val, "validation images of the grid (part of the training images of the comparison)")
	fs.Var(exampleutil.FloatFlag(&cfg.Target), "target", "target training `MSE` of the time-to-target column (0: the larger final error of the two methods)")
	fs.StringVar(&cfg.Init, "init", cfg.Init, "initial codes of every fit: match (each atom at its best-matching coordinate, the gate on the best atoms) or plain (logits near 0, coordinates ½)")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the split and the initial codes and decoder")
	fs.StringVar(&cfg.Out, "out", cfg.Out, "directory for reconstructions.png, curves.png, curves.csv and grid.csv")
	fs.StringVar(&cfg.Data, "data", cfg.Data, "the digits file (default: testdata/digits/digits.csv.gz in this directory or one above it)")
	quick := fs.Bool("quick", false, "a smaller grid and fewer iterations (flags given explicitly win)")
	if err := exampleutil.Parse(fs, args); err != nil {
		return cfg, err
	}
	if *quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		q := quickConfig()
		for name, apply := range map[string]func(){
			"iters":      func() { cfg.Iters = q.Iters },
			"adam-iters": func() { cfg.AdamIters = q.AdamIters },
			"grid-iters": func() { cfg.GridIters = q.GridIters },
			"taus":       func() { cfg.Taus = q.Taus },
			"lambdas":    func() { cfg.Lambdas = q.Lambdas },
			"tune":       func() { cfg.Tune = q.Tune },
		} {
			if !set[name] {
				apply()
			}
		}
	}
	return cfg, nil
}

// about is what the command does, in its usage.
const about = "Fits a softmax-gated latent-coordinate model to the UCI digits by Gauss-Newton steps and by Adam, and compares them."
