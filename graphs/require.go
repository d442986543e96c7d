package graphs

import "gorgonia.org/gorgonia"

// TB is the part of testing.TB that RequireGradients uses; *testing.T, *testing.B and
// *testing.F satisfy it. Taking this interface keeps package testing out of non-test
// builds.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// RequireGradients runs GradCheck and stops the test with t.Fatalf, printing the error
// and the full report, when it returns an error. It returns the report (which is nil only
// when t.Fatalf returned, as a fake TB's may).
//
//	func TestMyModel(t *testing.T) {
//		cost, params := buildModel()
//		graphs.RequireGradients(t, cost, params, graphs.WithMaxElements(50, 1))
//	}
func RequireGradients(t TB, cost *gorgonia.Node, wrt gorgonia.Nodes, opts ...Option) *Report {
	t.Helper()
	rep, err := GradCheck(cost, wrt, opts...)
	if err != nil {
		if rep != nil {
			t.Fatalf("%v\n%s", err, rep)
		} else {
			t.Fatalf("%v", err)
		}
	}
	return rep
}
