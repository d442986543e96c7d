// Package graphs builds and checks Gorgonia graphs for gatejet: Grad, reverse-mode
// differentiation that can differentiate a gradient again, a finite-difference gradient
// checker for any graph, a differentiable soft-argmin with its plain-slice helpers and
// natural gradient, and Gauss-Newton curvature terms (slabs, a curvature penalty and a
// batched log-determinant) built from the ops of package ops.
//
// Three things to know first:
//
//   - Second order needs Grad. gorgonia.Grad is right for one gradient (and feeds Gorgonia's
//     solvers), but it caches each derivative on its node and returns it again in later
//     calls: differentiating a gradient with it silently returns the first gradient.
//   - Replace gorgonia.SoftMax(x) with ops.Softmax(x, -1) (and gorgonia.LogSoftMax with
//     ops.LogSoftmax): Gorgonia's softmax gradient cannot be differentiated again, and Grad
//     says so, naming the op; the example of Grad "fromGorgoniaSoftMax" shows the migration.
//   - A trained model's state is the values of its learnable nodes (the ops hold none):
//     save them with encoding/gob (*tensor.Dense encodes itself) and restore them with
//     gorgonia.Let into the graph built again, as the example "SaveAndRestore" does.
//
// # Gradients of gradients
//
// gorgonia.Grad (v0.9.18) records each derivative it builds on its node and returns it again
// in later calls, whatever the cost, so gorgonia.Grad(Σ(∇c)², x) returns ∇c. Grad(cost,
// wrt...) builds the gradient from each op's SymDiff with its bookkeeping kept to the call:
//
//	g, _ := graphs.Grad(loss, w)                                               // ∇loss
//	hv, _ := graphs.Grad(gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(g[0], v)))), w) // H·v
//
// It names the op when a gradient cannot pass one (ErrNotDifferentiable). Gorgonia's solvers
// read the derivatives gorgonia.Grad records, so train with gorgonia.Grad and use Grad for
// what it gets wrong.
//
// # Gradient checking
//
// GradCheck compares the gradient of a scalar cost with respect to input nodes against
// central finite differences, element by element:
//
//	rep, err := graphs.GradCheck(cost, gorgonia.Nodes{W, b})
//	if errors.Is(err, graphs.ErrGradient) { fmt.Print(rep) }
//
// On the Tape machine (the default) the analytic gradient is that of the nodes Grad adds,
// so each Op's SymDiff is checked, and a cost that holds gradients (⟨∇c, v⟩, say) is checked
// as it is; on the Lisp machine
// (WithMachine(Lisp)) it is the machine's own reverse pass, so each Op's DoDiff is. An
// element passes when |analytic − numeric| ≤ atol + rtol·max(|analytic|, |numeric|);
// the step and tolerances default per dtype (float64: h = 1e-6, rtol = atol = 1e-6;
// float32: h = 1e-3, rtol = atol = 1e-2) and WithMaxElements samples large inputs. The
// Report gives, per node, the worst element with its index, both values and the errors.
// RequireGradients is the one-line form for tests; it takes any value with Helper and
// Fatalf, so this package does not import package testing.
//
// # Soft-argmin
//
// SoftArgmin(costs, s) is p = softmax(−s·costs) along the last axis, computed by
// backward.Softmax on the float64 logits −s·(costs − min costs): a differentiable stand-in
// for argmin whose gradient −s·(diag(p) − ppᵀ)·g is built from ops.SoftmaxBackward and can
// itself be differentiated. SoftArgminProbs, SoftArgminVJP and Argmin are the same on
// plain slices, for callers (such as an autotuner choosing among configurations by their
// measured or modelled costs) that have no graph. NaturalGradient preconditions a gradient
// with respect to the logits of a categorical distribution by the inverse Fisher
// information diag(p) − ppᵀ, either damped (F + λI) or as the pseudo-inverse on the
// subspace orthogonal to 1 (λ = 0).
//
// SoftArgmin and LogDetPlusRidge take ops.Options, like every builder of this package that
// builds ops of package ops, and
// their ops are ops of package ops: ops.ReuseOutput reaches them (and the gradient ops built
// from them), they report where they ran (ops.LastPath), have UsePreallocDo, and run on the
// CPU only (their kernels have no device code, so cudaops.ModeRequired makes their run a
// gatejet.ErrDevice error).
//
// # Curvature
//
// For the softmax-gated reconstruction of package ops, GaussNewtonSlabs gives the
// Gauss-Newton slabs H [n,K,K] (symmetric, positive semi-definite, singular along 1),
// CurvaturePenalty the scalar weight·mean_r trace(H_r) = weight·mean_r ‖first_r‖²_F, and
// GaussNewtonLogDet the [n] vector log det(H_r + λI) of a Laplace evidence term through
// LogDetPlusRidge, a batched log-determinant Op (a Cholesky factorisation by gonum's
// LAPACK) whose gradient is (sym(H) + λI)⁻¹. CoordGaussNewtonLogDet is its sibling over the 2K
// primaries (logits and latent coordinates) of a latent-coordinate model: log det(H_r/σ² + λI)
// with the inverse temperature, log σ and log λ as graph nodes, so that a Laplace evidence can
// be maximised in them by gradient.
//
// # Latent-coordinate decoders
//
// MonomialJets and BSplineJets decode each atom's row from a latent coordinate: from t [N,K]
// and coefficients B [K,nb,P] they build d0[n,k,c] = Σ_b Φ_b(t[n,k])·B[k,b,c] and its first
// two derivatives in t, d1 and d2, each [N,K,P], for monomials Φ_b = t^b or cubic B-splines on
// given knots. The three nodes are differentiable in t and B to any order with Grad: the
// basis op's gradient in t is the basis one order up, and the contraction with B is built
// from bilinear ops whose gradients are each other. Their ops are this package's own, run on
// the CPU and take no options. A B-spline coordinate outside the knots' span is an error
// when the graph runs. The closed forms are in docs/math.md ("Latent coordinates").
//
// # Errors
//
// Errors are *gatejet.Error values: graph-building and argument errors wrap the gatejet
// sentinels (gatejet.ErrShape, ErrRank, ErrDType, ErrParam, ErrTemperature, ...), and this
// package adds ErrGradient (a gradient check failed), ErrMachine (a machine failed to
// compile or run), ErrNotDifferentiable (Grad met an op without a gradient) and ErrNotSPD
// (a matrix given to LogDetPlusRidge is not positive definite, found when the graph runs).
// A gradient op that Grad builds and whose output would exceed gatejet.MaxBytes is a
// gatejet.ErrSize error (raise the limit with gatejet.SetMaxBytes), as is a shape whose
// element count overflows int.
//
// The plain-slice helpers never panic: they return a *gatejet.Error for an invalid
// argument (a length mismatch, a bad temperature, and for NaturalGradient a negative or
// non-finite lambda or a negative probability). NaN or infinite data are not errors: they
// carry through to the results as NaN or infinite values, except that a cost of +Inf beside
// finite costs gets probability 0; Argmin, which has no invalid arguments, skips NaN costs.
// Finite costs give finite probabilities for every accepted temperature, however large
// either is. Values stored column-major (tensor.AsFortran) are read, and gradients written,
// in their logical order. A nil ops.Option or CheckOption, a nil *Report (OK is false) and a nil TB are
// handled without a panic.
//
// # Concurrency
//
// Gorgonia v0.9.18's differentiation races with itself even on separate graphs. Grad,
// GradCheck and RequireGradients differentiate under one package-level lock, so they may run
// on separate graphs from several goroutines; code that calls gorgonia.Grad directly while
// they may run must serialise those calls itself.
//
// Gorgonia's machines wrap an Op's error in a type that errors.Is cannot see through;
// OpError recovers the *gatejet.Error from a machine's error. A Gorgonia v0.9.18
// LispMachine whose forward pass fails keeps running its reverse pass in the background;
// GradCheck avoids that by running the forward pass alone first, and callers of
// gorgonia.NewLispMachine on graphs that may fail at run time (LogDetPlusRidge on data
// that may not be positive definite) should do the same.
package graphs
