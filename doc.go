// Package gatejet holds what every gatejet package shares: the error catalogue, the limits
// (MaxInvTau, MaxLogisticAlpha, MaxBytes) and the element-type constraint Float.
//
// gatejet puts second-order softmax-gate derivatives inside Gorgonia graphs. A model gates K
// atoms with a softmax over logits l and reconstructs each output column as
//
//	ẑ_c = Σ_k softmax(s·l)_k · decoded[k][c],   s = 1/τ,
//
// and second-order training methods need, per row, the jet of that reconstruction:
// first[a][c] = ∂ẑ_c/∂l_a and second[a][b][c] = ∂²ẑ_c/∂l_a∂l_b.
//
// The maths lives in plain-slice packages that do not import Gorgonia:
//
//   - softmaxjet: the closed-form jet channels, Hessian-vector products, Gauss-Newton slabs
//     and vector-Jacobian products (tested against an independent order-2 jet tower);
//   - backward: softmax / log-softmax backward along any axis and activation backward kernels,
//     with their double-backward formulas.
//
// Package ops adapts them to Gorgonia Ops; graphs builds larger graphs and checks gradients;
// cudaops chooses where the kernels run (CPU or GPU).
//
// # Errors
//
// Every structural problem (shape, rank, dtype, axis, temperature, buffer size) is reported as
// an *Error whose Kind is one of the sentinel errors below, so callers can write
//
//	if errors.Is(err, gatejet.ErrShape) { … }
//
// or recover the details with errors.As. Non-finite values in the data are not errors: they
// propagate within their own row, as a softmax does.
package gatejet
