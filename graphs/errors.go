package graphs

import (
	"errors"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/graphmath"
)

// Sentinel errors of package graphs. Errors returned by this package are *gatejet.Error
// values whose Kind is one of these or one of the gatejet sentinels, so errors.Is works on
// both.
var (
	// ErrGradient: a symbolic (or automatic) gradient disagrees with central finite
	// differences by more than the tolerance.
	ErrGradient = errors.New("gradient does not match finite differences")
	// ErrMachine: a Gorgonia machine failed to compile or run the graph.
	ErrMachine = errors.New("graph machine failed")
	// ErrNotSPD: a matrix that must be symmetric positive definite (after the ridge) is
	// not, so its Cholesky factorisation failed.
	ErrNotSPD = graphmath.ErrNotSPD
	// ErrNotDifferentiable: a gradient was asked for through an op that cannot be
	// differentiated symbolically (Grad names the op).
	ErrNotDifferentiable = errors.New("not differentiable")
)

// OpError returns the *gatejet.Error that an Op returned from inside a Gorgonia machine's
// run error, or nil if there is none.
//
// Gorgonia's TapeMachine and LispMachine wrap the error of a failing Op in a type that has
// an Err method but no Unwrap, so errors.Is and errors.As stop there: errors.Is(err,
// ErrNotSPD) is false for the error of a machine whose LogDetPlusRidge node met a
// matrix that is not positive definite, while errors.Is(OpError(err), ErrNotSPD) is true.
// OpError follows Unwrap (single and multiple), Err and Cause methods. The walk is
// bounded (at most opErrorDepth links deep and opErrorSteps errors in all), so an error
// whose chain or tree contains itself ends the search instead of the stack.
func OpError(err error) *gatejet.Error {
	steps := opErrorSteps
	return opError(err, 0, &steps)
}

const (
	opErrorDepth = 64   // links followed along one path
	opErrorSteps = 1024 // errors looked at over the whole tree
)

func opError(err error, depth int, steps *int) *gatejet.Error {
	for ; err != nil && depth < opErrorDepth && *steps > 0; depth++ {
		*steps--
		if ge, ok := err.(*gatejet.Error); ok {
			return ge
		}
		switch e := err.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				if *steps <= 0 {
					return nil
				}
				if ge := opError(inner, depth+1, steps); ge != nil {
					return ge
				}
			}
			return nil
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		case interface{ Err() error }:
			err = e.Err()
		case interface{ Cause() error }:
			err = e.Cause()
		default:
			return nil
		}
	}
	return nil
}
