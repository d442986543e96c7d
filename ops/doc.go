// Package ops makes gatejet's kernels Gorgonia operations: graph nodes with type and shape
// inference, forward computation, and gradients for both of Gorgonia's virtual machines.
//
// Build nodes with the constructors below and run the graph on a TapeMachine or a
// LispMachine like any other. Three things to know first:
//
//   - Second order needs graphs.Grad. gorgonia.Grad is right for one gradient (and feeds
//     Gorgonia's solvers), but it caches each derivative on its node and returns it again in
//     later calls: differentiating a gradient with it (Hessian-vector products, gradient
//     penalties) silently returns the first gradient. graphs.Grad differentiates again.
//   - Replace gorgonia.SoftMax(x) with Softmax(x, -1) (gorgonia.LogSoftMax with
//     LogSoftmax(x, -1)): Gorgonia's softmax gradient cannot be differentiated again, this
//     package's can, on both machines. graphs.Grad's example shows the migration.
//   - The ops hold no learned state, so a trained model is saved by saving the values of its
//     learnable nodes (encoding/gob encodes *tensor.Dense) and restored by binding them, with
//     gorgonia.Let, to the graph built again by the same code: the package graphs example
//     "SaveAndRestore" does it, with the same outputs bit for bit.
//
// # Errors, not panics
//
// Every constructor validates the argument nodes and returns a
// *gatejet.Error (matching gatejet.ErrRank, ErrShape, ErrDType, ErrTemperature, ErrAxis,
// ErrParam, ErrNonFinite or ErrSize with errors.Is, and naming the argument) before anything
// reaches gorgonia.ApplyOp, so building a node never panics. An output larger than
// gatejet.MaxBytes is refused then (ErrSize, argument "output", naming the size), and so is
// such a gradient op when graphs.Grad or gorgonia.Grad builds it (gorgonia.Grad keeps only
// the message; graphs.Grad's error matches ErrSize); every buffer a run allocates is checked
// against the limit again, so lowering it with gatejet.SetMaxBytes after a node was built
// gives an ErrSize error from the run, never an out-of-memory crash. The ops' methods, which
// Gorgonia's interfaces expose (Do, UsePreallocDo, InferShape, SymDiff, DoDiff, DiffWRT,
// WriteHash), return ErrParam errors or zero values for nil or missing nodes, values and
// hashes rather than panicking. The maths lives in package softmaxjet (row-jet channels and
// their vector-Jacobian products) and package backward (softmax-family backward, activations,
// double backward); the log-determinant below factors with gonum's Cholesky. Each op checks
// the values it is given and calls one kernel on their row-major float64 or float32 storage
// (a column-major or view value is copied first).
//
// # Ops
//
// With logits [n,K], decoded [n,K,P] and a direction v [n,K], all of one dtype:
//
//	SoftmaxJetValue(l, D, invTau)        [n,P]      ẑ = Σ_k softmax(invTau·l)_k·D[k]
//	SoftmaxJetFirst(l, D, invTau)        [n,K,P]    ∂ẑ/∂l
//	SoftmaxJetSecond(l, D, invTau)       [n,K,K,P]  ∂²ẑ/∂l²
//	SoftmaxJetHVP(l, D, v, invTau)       [n,K,P]    Σ_b second[·][·][b][·]·v_b
//	SoftmaxJetGaussNewton(l, D, invTau)  [n,K,K]    first·firstᵀ per row
//	LogisticJet{Value,First,Second,HVP,GaussNewton}(l, D[, v], alpha, beta): the same
//	    channels for the per-atom gate σ(α_k·l_k + β_k) (α, β of length K, constants)
//	Softmax(x, axis), LogSoftmax(x, axis): softmax / log-softmax along axis of x (any rank 1
//	    to 8; max-subtracted), replacing gorgonia.SoftMax (last axis: Softmax(x, -1))
//	SoftmaxBackward(y, dy, axis), LogSoftmaxBackward(y, dy, axis): the input gradient of a
//	    softmax / log-softmax along axis from its saved output y (any rank 1 to 8)
//	ReLU(x), GELU(x), SiLU(x) and ReLUBackward, GELUBackward, SiLUBackward(x, dy)
//
// With each atom's decoded row a function of a latent coordinate t_k, the coordinate jets
// differentiate over the 2K primaries p = (l, t): they take the decoded rows d0 and their
// first and second derivatives in t, d1 and d2, each [n,K,P] (graphs.MonomialJets and
// graphs.BSplineJets build them from t and a basis's coefficients), and v [n,2K]:
//
//	SoftmaxCoordJetFirst(l, d0, d1, invTau)               [n,2K,P]     ∂ẑ/∂p (rows l, then t)
//	SoftmaxCoordJetSecond(l, d0, d1, d2, invTau)          [n,2K,2K,P]  ∂²ẑ/∂p²
//	SoftmaxCoordJetHVP(l, d0, d1, d2, v, invTau)          [n,2K,P]     Σ_b second[·][·][b][·]·v_b
//	SoftmaxCoordJetGaussNewton(l, d0, d1, invTau)         [n,2K,2K]    first·firstᵀ per row
//	LogisticCoordJet{First,Second,HVP,GaussNewton}(…, alpha, beta): the same channels for
//	    the logistic gate
//
// Like the row jets, they run on the CPU or, with a GPU backend, on the device (see below).
//
// Package graphs builds on them: a differentiable soft argmin and a log-determinant, among
// others.
//
// invTau (and α, β) are constants of the op, in (0, gatejet.MaxInvTau]. To learn a temperature,
// scale the logits in the graph and pass invTau = 1: SoftmaxJetValue(s·l, D, 1) is the value
// channel at inverse temperature s, and gradients reach s through Gorgonia's own Mul
// (docs/tour.md, "Learning the temperature", shows it, checked with graphs.GradCheck).
//
// Every constructor takes Options after its arguments. ReuseOutput makes the op write each
// run's result into one buffer it owns, rather than a new tensor per run (see below).
//
// # Gradients
//
// Each differentiable op implements gorgonia.SDOp (DiffWRT, SymDiff), so gorgonia.Grad builds
// its gradient into the graph for a TapeMachine, and gorgonia.ADOp (DoDiff), so a LispMachine
// differentiates it as it runs. The gradient nodes SymDiff inserts are ops of this package,
// one output each:
//
//   - a jet channel's gradient with respect to input i (logits, decoded or v) is a VJP op
//     whose inputs are the channel's inputs and the upstream gradient: Value uses
//     softmaxjet.Softmax.ValueVJP; First uses FirstVJP, the second channel contracted with the
//     upstream gradient without building it; Second uses SecondVJP, the O(K²·P) third-order
//     contraction; HVP uses HVPVJP, including the gradient with respect to v; GaussNewton uses
//     GaussNewtonVJP; the Logistic* ops use their Logistic*VJP counterparts. The value,
//     first and Gauss-Newton channels' VJP ops are differentiable in turn: the value
//     channel's gradients are the HVP, the first channel and its VJP, contracted; the first
//     channel's are the HVP, the HVP's VJP (the third-order contraction) and the first
//     channel's VJP; the Gauss-Newton channel's VJP is the first channel's at upstream
//     (G + Gᵀ)·first, and its gradients are the first channel's VJP gradients there plus
//     batched products with first. So a loss on SoftmaxJetValue, SoftmaxJetFirst,
//     SoftmaxJetGaussNewton or their Logistic* counterparts (and on graphs.LogDetPlusRidge of the
//     slabs, whose gradient op is differentiable too) has exact Hessian-vector products
//     through graphs.Grad. The second channel's and the HVP's VJP ops are not
//     differentiable (they would need the fourth order of the jet): graphs.Grad names them.
//   - A coordinate jet's gradient is composed of the row-jet ops: the channel over d0, the
//     gate ζ and its Jacobian (the value and first channels over identity decoded rows, P = K),
//     two row contractions of this package (x_k·Y[k] and ⟨Y[k], Z[k]⟩, each the other's
//     gradient), and Gorgonia's slices, concatenations and batched products
//     (ops/coordvjp.go). A loss on any coordinate jet of a built-in gate can be differentiated
//     twice with graphs.Grad (the second channel's and HVP's row terms through the gate's
//     closed forms, polynomials in ζ); for another gate, a loss on its coordinate second
//     channel or HVP once, the second gradient refused as the row jets' is. DoDiff runs the
//     gradient on a graph of its own.
//   - Softmax and LogSoftmax have SoftmaxBackward and LogSoftmaxBackward of their output as
//     gradient, so a graph through them can be differentiated twice.
//   - SoftmaxBackward and LogSoftmaxBackward are differentiable in both y and dy (double
//     backward, backward.SoftmaxBackwardGrad and LogSoftmaxBackwardGrad), which Gorgonia's own
//     softmax gradient is not. The double-backward ops are not differentiable.
//   - GELU, SiLU and ReLU have the corresponding *Backward op as gradient; the *Backward ops
//     are differentiable in x and dy through backward.*BackwardGrad.
//
// DoDiff computes every input's gradient in a single kernel call (the VJP kernels write
// dLogits, dDecoded and dV together) and adds it, in place, into the live gradient tensor of
// each input node, which node.Grad returns during a LispMachine's reverse pass. A
// non-differentiable op's DoDiff accepts a zero output gradient (its output does not reach
// the cost) and returns an error otherwise, rather than dropping a gradient silently. For the
// same reason a non-differentiable op's SymDiff returns an error and its DiffWRT reports its
// inputs differentiable, since graphs.Grad and gorgonia.Grad treat an input reported not
// differentiable as a constant. The exceptions are inputs the op's output does not depend
// on: decoded for the dD of a channel linear in decoded (all but Gauss-Newton), v for the
// HVP's dv, and dy for a
// double backward with respect to dy.
//
// # Running on a GPU
//
// Every computation (forward, gradient op, DoDiff) has the CPU kernel as its fallback, so
// when a GPU backend is registered (the standalone backend of gatejet's build tag
// gatejetcuda; see package cudaops and docs/gpu.md) the residency mode set with
// cudaops.SetMode or the GATEJET_GPU environment variable decides where each call runs;
// nothing in a graph changes. The default build has
// no backend and runs everything on the CPU.
//
// Under Gorgonia's build tag cuda every op is also a gorgonia.CUDADoer, so Gorgonia's CUDA
// machine keeps a graph that mixes these ops and Gorgonia's on the device: CUDADo runs the
// op's kernel on the device values the machine hands it and writes its preallocated device
// output, except the row contractions of the coordinate jets' gradients, the ops of
// graphs.SoftArgmin, graphs.LogDetPlusRidge and the latter's gradient, whose kernels run on
// the CPU only and which are staged through host (inputs copied to host, host path, output
// copied back). A LispMachine's reverse pass still calls DoDiff, which then waits for the
// machine's queued device work and reads and accumulates device values through host copies.
// See docs/gpu.md, "CUDADoer ops".
//
// # Which path ran
//
// Every op records the cudaops.Path of its computations, readable while it runs elsewhere:
// LastPath(node) gives the path of the most recent Do or UsePreallocDo of the node's op.
// cudaops.Stats counts every call process-wide.
//
// # Output buffers on a TapeMachine
//
// A Gorgonia v0.9.18 TapeMachine drops its registers on Reset, so in the usual loop (RunAll,
// Reset, repeat) it calls each op's Do every run, and Do returns a new tensor: for
// SoftmaxJetSecond at n=4096, K=16, P=16 that is 128 MiB allocated per run. Do does not zero
// it (the op writes every element; zeroing would take longer than computing it), so that
// costs little. An op built with ReuseOutput writes every run into one buffer it owns (and so
// do the gradient ops gorgonia.Grad builds from it): a run then allocates only small headers. The price is aliasing: a value read from the node after one
// run is overwritten by the next, so copy what you keep. The buffer belongs to the node the
// op makes, so such an op makes one node: gorgonia.ApplyOp of it again is an ErrParam error
// (build each node with the constructor), and a graph holding such nodes is rebuilt, not
// cloned. UsePreallocDo is unchanged.
//
// # Notes on Gorgonia v0.9.18
//
//   - A TapeMachine reuses the register of a node once it is dead, and may overwrite an
//     intermediate value in place, so after RunAll only the graph's roots are sure to hold
//     their values. Read a node you need with gorgonia.Read(node, &v), which adds a node that
//     copies the value out as the tape runs; gorgonia.TraceExec makes the machine keep every
//     node's value instead, which costs a buffer per node and suits debugging. Keep v apart
//     from any struct that holds the machine: a TapeMachine has a finalizer, and one that
//     reaches itself through &v is never freed, nor is any value of its graph.
//   - gorgonia.Grad records each derivative it builds and returns it again in later calls,
//     whatever the cost: use graphs.Grad to differentiate a graph that holds gradients.
//   - A LispMachine's Reset does not rewind its forward pass: build a new LispMachine for
//     every run (the graph and its values are kept).
//   - Reshape's DoDiff reshapes its output's gradient in place and hands it on as its input's,
//     so on a later run the gradient of a reshaped node carries the Reshape input's shape.
//     Like Gorgonia's own ops, these ops add into a gradient over its elements whatever shape
//     it carries, so a graph with Reshape, Transpose or Slice runs on one new LispMachine
//     after another.
package ops
