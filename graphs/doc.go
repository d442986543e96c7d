// Package graphs builds and checks Gorgonia graphs for gatejet.
//
// # Gradient checking
//
// GradCheck compares the gradient of any scalar Gorgonia cost with central finite
// differences, on a TapeMachine (gradient nodes from gorgonia.Grad, that is each Op's
// SymDiff) or a LispMachine (each Op's DoDiff). It reports, per input node, the worst
// element against the tolerance |analytic − numeric| ≤ atol + rtol·max(|analytic|,
// |numeric|), and returns an error matching ErrGradient when an element is outside it.
// RequireGradients wraps it for tests.
package graphs
