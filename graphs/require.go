package graphs

import (
	"reflect"

	"gorgonia.org/gorgonia"
)

// TB is the part of testing.TB that RequireGradients uses; *testing.T, *testing.B and
// *testing.F satisfy it. Taking this interface keeps package testing out of non-test
// builds.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// RequireGradients runs GradCheck and stops the test with t.Fatalf, printing the error
// and the full report, when it returns an error. It returns the report (which is nil only
// when t.Fatalf returned, as a fake TB's may, after an argument or machine error). A nil t
// (or a nil *testing.T) cannot be failed: the check still runs and its report is returned,
// nil on an argument or machine error, so rep.OK() tells whether it passed.
//
//	func TestMyModel(t *testing.T) {
//		cost, params := buildModel()
//		graphs.RequireGradients(t, cost, params, graphs.WithMaxElements(50, 1))
//	}
func RequireGradients(t TB, cost *gorgonia.Node, wrt gorgonia.Nodes, opts ...CheckOption) *Report {
	if isNilTB(t) {
		rep, _ := GradCheck(cost, wrt, opts...)
		return rep
	}
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

// isNilTB reports whether t is nil or a typed nil pointer, whose methods would panic.
func isNilTB(t TB) bool {
	if t == nil {
		return true
	}
	v := reflect.ValueOf(t)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
