// Package conformance holds gatejet's cross-package conformance tests: "nothing silently
// wrong". It has no non-test code.
//
//   - catalogue_test.go and catalogue_{bounds,graphs,maths,ops,softmax}_test.go: a table of
//     distinct bad inputs to every public constructor and kernel (ops, softmaxjet, backward,
//     cudaops, graphs). Each must return an error that
//     matches the documented sentinel with errors.Is, is a *gatejet.Error naming the argument
//     at fault and the operation, and never panics. catalogue_coverage_test.go fails when an
//     exported function of those packages that returns an error is not called by the
//     catalogue (the few that take no input to refuse are listed there with the reason).
//   - fuzz_test.go: FuzzOpConstructors, FuzzCoordOpConstructors (the coordinate jets of every
//     arity, up to five node arguments) and FuzzOpsRun, with seed corpora under
//     testdata/fuzz so that they run as ordinary tests.
//   - extremes_test.go: numerical extremes through the Gorgonia ops (large offsets, extreme
//     temperatures, NaN isolation between rows, masked atoms, tiny and large sizes, empty
//     batches).
//   - race_test.go: concurrent machines over shared ops and graphs, and concurrent
//     mode changes and kernel calls (internal/dispatch) with a fake backend; meant for
//     go test -race.
//   - determinism_test.go: bit-identical results across runs and core counts.
//   - layers_test.go: internal/ is the lower layer: no package under it imports a public
//     package of the module (go list), but for the kernel table's maths.
//   - device_test.go: GPU-fault behaviour at the cudaops seam (ModeRequired without a
//     backend, a failing backend under ModeAuto, registration and release, GATEJET_GPU).
//   - lenient_test.go: what is accepted rather than rejected, and must then be right
//     (vector-equivalent shapes, views bound to inputs).
//   - golden_test.go: the PyTorch golden files of testdata/golden (autograd in float64, read
//     by internal/golden) against softmaxjet and backward called directly and through cpuref,
//     and against the Gorgonia ops with their gradients on both machines, at 1e-12.
//
// A bug found here is fixed, and its case stays as an ordinary test of the file it belongs to;
// no known bug is kept as a skipped test.
//
// Tests that change process-wide state (the cudaops mode, the registered backend, break-even
// values, the par settings) restore it in t.Cleanup and do not run in parallel.
package conformance
