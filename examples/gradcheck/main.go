// Command gradcheck checks the gradients of a user's own Gorgonia graph that mixes gatejet
// ops with Gorgonia's, against central finite differences, with graphs.GradCheck.
//
//	go run ./examples/gradcheck                  # tape and lisp machines, float64
//	go run ./examples/gradcheck -dtype float32   # float32, looser tolerance
//	go run ./examples/gradcheck -bug             # add an op with a wrong gradient: exit status 1
//
// The graph (see build) feeds the inputs through a Gorgonia matmul and gatejet's GELU to
// gate logits, then uses every kind of gatejet node a second-order model needs: the
// value, first and second jet channels, a Hessian-vector product, the Laplace log-det of
// the Gauss-Newton slabs, graphs.SoftArgmin and ops.SoftmaxBackward. The scalar cost sums
// them with Gorgonia arithmetic. The gradient of the cost in each input
// node therefore runs through the jet's vector-Jacobian products, among them the
// third-order contraction behind the second channel.
//
// For each machine it prints GradCheck's per-node report (worst element, its analytic and
// numeric values, the tolerance ratio) and exits with status 1 when any element is outside
// the tolerance. The ratio of an element is
//
//	ratio = |analytic − numeric| / (atol + rtol·max(|analytic|, |numeric|))
//
// with rtol and atol from the report's header line: the element passes when ratio ≤ 1, so a
// ratio of 0.001 is a thousand times inside the tolerance (+Inf when a value is NaN or
// infinite). The report prints this legend under the header. -bug adds a deliberately wrong op (x² whose gradient forgets the factor
// 2) so that you can see what a failure looks like.
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
		return run(cfg)
	})
}

// op names the command in its *gatejet.Error values.
const op = "gradcheck"

// about is what the command does, in its usage.
const about = "Checks the gradients of a graph mixing gatejet ops with Gorgonia's against finite differences (graphs.GradCheck)."

// parseFlags reads the command line into a Config.
func parseFlags(args []string, errOut io.Writer) (Config, error) {
	cfg := Config{Machines: "both", DType: "float64", Seed: 1}
	fs := exampleutil.FlagSet(op, about, errOut)
	fs.StringVar(&cfg.Machines, "machine", cfg.Machines, "tape, lisp or both")
	fs.StringVar(&cfg.DType, "dtype", cfg.DType, "float64 or float32")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the random inputs")
	fs.BoolVar(&cfg.Bug, "bug", false, "add an op with a deliberately wrong gradient")
	return cfg, exampleutil.Parse(fs, args)
}

// Config selects what run checks.
type Config struct {
	Machines string // "tape", "lisp" or "both"
	DType    string // "float64" or "float32"
	Seed     uint64
	Bug      bool      // add wrongSquare to the cost
	Out      io.Writer // the reports (nil: discarded)
}
