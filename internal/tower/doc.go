// Package tower is the order-2 jet tower: the seed design's general, slow and
// obviously-correct path to the channels of a gated reconstruction, kept as the oracle that
// softmaxjet's closed forms are tested against and as the baseline of examples/bench.
//
// One row gates K atoms with logits l[K] and reconstructs P output columns from the atoms'
// decoded values D[K][P], ẑ_c = Σ_k ζ_k·D[k][c]. The gate is a function of its jets
// (GateJets, in a Gate): the softmax gate ζ = softmax(s·l) (Softmax), the per-atom logistic
// gate ζ_k = σ(α_k·l_k + β_k) (Logistic) or any other built from the jet operations (JetGate).
// The package computes the value, first and second channels by jet arithmetic alone, with no
// hand-written chain rule:
//
//   - Jet is an order-2 jet (value, gradient, Hessian) over a run-time number m of primaries,
//     with the operations the gates need (Add, Mul, Exp, Recip, Logistic, …); Tower is an
//     arena of jets that allocates nothing once it has grown.
//   - Program evaluates one row with a ProgramSpec: the logits as primaries, or the logits
//     and the atoms' latent coordinates t_k, decoded through a Basis and a decoder matrix.
//     It costs O(K·m²·P) per row, O(K³·P) with the logits as primaries.
//   - TowerChannels, TowerLogisticChannels and GateChannels (any gate) run the row program
//     over a batch (see Shape;
//     the layouts are softmaxjet's), spreading rows over the cores; each row is computed by
//     one goroutine with the same code, so results do not depend on the core count.
//
// The jet arithmetic is done in the element type: a float32 tower is a float32 computation,
// where softmaxjet's closed forms compute in float64 and round once. The exponential is
// math.Exp. The float32 jets hold s² or α² in their Hessians, so they accept s and |α| up to
// 1e18 only (ErrTemperature, ErrParam beyond). A program's workspace — K + 3 jets of m + m²
// elements, K³ for the logits alone — and its basis buffers are checked against
// gatejet.MaxBytes before anything is allocated (ErrSize).
//
// Arguments are checked with softmaxjet's rules and errors (*gatejet.Error values matching
// gatejet.ErrShape, ErrSize, ErrTemperature, ErrParam or ErrNonFinite, an output that shares
// memory with another argument included), and non-finite data propagate within their own
// row, as a softmax does.
//
// The package does not import softmaxjet, so that softmaxjet's own tests can use it as their
// oracle; convert a softmaxjet.Shape with tower.Shape(sh).
package tower
