package cu_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"gorgonia.org/cu"
	cublas "gorgonia.org/cu/blas"
	cudnn "gorgonia.org/cu/dnn"

	"gonum.org/v1/gonum/blas"
)

// childEnv marks a test binary run by runChild: the child tests run only there, with the
// driver the parent chose (the driver is opened once per process).
const childEnv = "CUDACOMPAT_TEST_CHILD"

// runChild runs the test binary again for the test named child, with env added, and fails
// with its output when the child fails.
func runChild(t *testing.T, child string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.v")
	cmd.Env = append(os.Environ(), append(env, childEnv+"=1")...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+child) {
		t.Fatalf("%s: %v\n%s", child, err, out)
	}
	t.Logf("%s:\n%s", child, out)
}

func needChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by its parent test with the driver it chose")
	}
}

// TestMissingDriver: with no driver library, and with a library that is not a driver, every
// call returns an error and nothing exits or panics.
func TestMissingDriver(t *testing.T) {
	runChild(t, "TestMissingDriverChild", cu.DriverEnv+"="+filepath.Join(t.TempDir(), "libcuda.so.1"),
		cublas.LibEnv+"="+filepath.Join(t.TempDir(), "libcublas.so"), cudnn.LibEnv+"="+filepath.Join(t.TempDir(), "libcudnn.so"))
	runChild(t, "TestMissingDriverChild", cu.DriverEnv+"=libm.so.6", cublas.LibEnv+"=libm.so.6", cudnn.LibEnv+"=libm.so.6")
}

func TestMissingDriverChild(t *testing.T) {
	needChild(t)
	n, err := cu.NumDevices()
	var le *cu.LoadError
	if n != 0 || !errors.As(err, &le) {
		t.Fatalf("NumDevices: %d, %v; want 0 and a *LoadError", n, err)
	}
	t.Logf("NumDevices: %v", err)
	if cu.Init() != err {
		t.Fatalf("Init: %v; want the same error as NumDevices", cu.Init())
	}
	if _, err := cu.GetDevice(0); !errors.As(err, &le) {
		t.Fatalf("GetDevice: %v", err)
	}
	if _, err := cu.Device(0).MakeContext(cu.SchedAuto); !errors.As(err, &le) {
		t.Fatalf("MakeContext: %v", err)
	}
	if _, err := cu.MemAlloc(8); !errors.As(err, &le) {
		t.Fatalf("MemAlloc: %v", err)
	}
	if _, _, err := cu.MemInfo(); !errors.As(err, &le) {
		t.Fatalf("MemInfo: %v", err)
	}
	if _, err := cu.LoadData(".target sm_90"); !errors.As(err, &le) {
		t.Fatalf("LoadData: %v", err)
	}
	if v := cu.Version(); v != -1 {
		t.Fatalf("Version: %d, want -1", v)
	}
	if s := cu.DevicePtr(0x1000).MemSize(); s != 0 {
		t.Fatalf("MemSize: %d, want 0", s)
	}
	// A batch whose context cannot be made current: every call fails with the load error.
	b := cu.NewBatchedContext(cu.CtxFromCUContext(0, cu.CUContext{}, cu.SchedAuto), 0)
	b.MemcpyHtoD(0x1000, unsafe.Pointer(new(float64)), 8)
	b.Synchronize()
	b.DoWork()
	var be *cu.BatchError
	if err := b.Errors(); !errors.As(err, &be) || len(be.Failed) != 2 || !errors.As(err, &le) {
		t.Fatalf("Errors: %v; want both calls failed on the load error", err)
	}
	if _, err := b.MemAlloc(8); !errors.As(err, &le) {
		t.Fatalf("batched MemAlloc: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	var std cublas.Standard
	var ble *cublas.LoadError
	if err := std.Init(); !errors.As(err, &ble) {
		t.Fatalf("cublas Init: %v; want a *cublas.LoadError", err)
	}
	t.Logf("cublas: %v", std.Init())
	std.Dgemm(blas.NoTrans, blas.NoTrans, 1, 1, 1, 1, []float64{1}, 1, []float64{1}, 1, 0, []float64{0}, 1)
	if std.Err() == nil {
		t.Fatal("Dgemm without a handle: no error")
	}
	if err := std.Close(); err != nil {
		t.Fatalf("cublas Close: %v", err)
	}

	dnn := cudnn.NewContext()
	var dle *cudnn.LoadError
	if !errors.As(dnn.Err(), &dle) {
		t.Fatalf("cudnn NewContext: %v; want a *cudnn.LoadError", dnn.Err())
	}
	if err := dnn.Close(); err != nil {
		t.Fatalf("cudnn Close: %v", err)
	}
	if cudnn.Version() != 0 {
		t.Fatalf("cudnn Version: %d, want 0", cudnn.Version())
	}
}

// TestUninitialisedBatchedContext: the zero BatchedContext (as in a zero Gorgonia engine)
// reports that it was not made, and processes nothing.
func TestUninitialisedBatchedContext(t *testing.T) {
	var b cu.BatchedContext
	b.MemcpyHtoD(0x1000, unsafe.Pointer(new(float64)), 8)
	b.DoWork()
	b.Cleanup()
	if b.Errors() == nil || b.IsInitialized() {
		t.Fatalf("zero BatchedContext: Errors %v, IsInitialized %v", b.Errors(), b.IsInitialized())
	}
	if _, err := b.MemAlloc(8); err == nil {
		t.Fatal("zero BatchedContext: MemAlloc succeeded")
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// fakeDriver is the fake driver to test against: $GATEJET_CUDA_LIB when set (CI builds it),
// else built from the repository's cudaops/testdata/fakecuda with g++.
func fakeDriver(t *testing.T) string {
	if lib := os.Getenv(cu.DriverEnv); lib != "" {
		return lib
	}
	src := filepath.Join("..", "cudaops", "testdata", "fakecuda", "fakecuda.cpp")
	emu := filepath.Join("..", "cudaops", "internal", "emu", "emu.cpp")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("no fake driver: set %s to one, or run in gatejet's repository (%v)", cu.DriverEnv, err)
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no fake driver: building it needs g++")
	}
	lib := filepath.Join(t.TempDir(), "libcuda-fake.so")
	out, err := exec.Command(gxx, "-std=c++17", "-O2", "-fno-omit-frame-pointer", "-shared", "-fPIC",
		"-o", lib, src, emu, "-lpthread").CombinedOutput()
	if err != nil {
		t.Fatalf("building the fake driver: %v\n%s", err, out)
	}
	return lib
}

// TestFakeDriver runs the driver calls, contexts and batches against the fake driver of
// cudaops/testdata/fakecuda (device memory is host memory; it checks contexts and bounds).
func TestFakeDriver(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("a child run")
	}
	runChild(t, "TestFakeDriverChild", cu.DriverEnv+"="+fakeDriver(t),
		cublas.LibEnv+"="+filepath.Join(t.TempDir(), "none.so"), cudnn.LibEnv+"="+filepath.Join(t.TempDir(), "none.so"))
}

func TestFakeDriverChild(t *testing.T) {
	needChild(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	n, err := cu.NumDevices()
	if err != nil || n != 1 {
		t.Fatalf("NumDevices: %d, %v; want 1", n, err)
	}
	if v := cu.Version(); v != 11080 {
		t.Fatalf("Version: %d, want 11080", v)
	}
	dev, err := cu.GetDevice(0)
	if err != nil || dev != 0 || dev.String() != "GPU(0)" {
		t.Fatalf("GetDevice: %v %v", dev, err)
	}
	if _, err := cu.GetDevice(1); err != cu.InvalidValue {
		t.Fatalf("GetDevice(1): %v, want the driver's InvalidValue", err)
	}
	name, err := dev.Name()
	if err != nil || !strings.Contains(name, "fake") {
		t.Fatalf("Name: %q %v", name, err)
	}
	if major, minor, err := dev.ComputeCapability(); err != nil || major != 9 || minor != 0 {
		t.Fatalf("ComputeCapability: %d.%d %v", major, minor, err)
	}
	attrs, err := dev.Attributes(cu.MaxGridDimX, cu.MaxSharedMemoryPerBlock)
	if err != nil || attrs[0] != 1<<31-1 || attrs[1] != 48<<10 {
		t.Fatalf("Attributes: %v %v", attrs, err)
	}
	if _, err := dev.Attributes(cu.MultiprocessorCount); !errors.Is(err, cu.InvalidValue) {
		t.Fatalf("an attribute the fake does not know: %v", err)
	}
	var missing *cu.EntryPointError
	if _, err := dev.TotalMem(); !errors.As(err, &missing) || missing.Name != "cuDeviceTotalMem_v2" {
		t.Fatalf("TotalMem on a driver without the entry point: %v", err)
	}
	if !strings.Contains(cu.InvalidValue.Error(), "CUDA_ERROR_INVALID_VALUE") {
		t.Fatalf("Result.Error: %q does not name the error", cu.InvalidValue.Error())
	}

	// No context current yet: the driver refuses.
	if _, err := cu.MemAlloc(64); err != cu.InvalidContext {
		t.Fatalf("MemAlloc without a context: %v", err)
	}
	cuctx, err := dev.MakeContext(cu.SchedAuto)
	if err != nil {
		t.Fatalf("MakeContext: %v", err)
	}
	if cur, err := cu.CurrentContext(); err != nil || cur != cuctx {
		t.Fatalf("CurrentContext: %v %v, want %v", cur, err, cuctx)
	}
	free, total, err := cu.MemInfo()
	if err != nil || free <= 0 || free > total {
		t.Fatalf("MemInfo: %d %d %v", free, total, err)
	}

	src := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	bytes := int64(8 * len(src))
	p, err := cu.MemAlloc(bytes)
	if err != nil {
		t.Fatalf("MemAlloc: %v", err)
	}
	if err := cu.MemcpyHtoD(p, unsafe.Pointer(&src[0]), bytes); err != nil {
		t.Fatalf("MemcpyHtoD: %v", err)
	}
	got := make([]float64, len(src))
	if err := cu.MemcpyDtoH(unsafe.Pointer(&got[0]), p, bytes); err != nil {
		t.Fatalf("MemcpyDtoH: %v", err)
	}
	for i := range src {
		if got[i] != src[i] {
			t.Fatalf("round trip: %v, want %v", got, src)
		}
	}
	if size, base, err := (p + 16).AddressRange(); err != nil || size != bytes || base != p {
		t.Fatalf("AddressRange: %d %v %v", size, base, err)
	}
	if (p + 8).MemSize() != uintptr(bytes) {
		t.Fatalf("MemSize: %d", (p + 8).MemSize())
	}
	if err := cu.MemcpyHtoD(p+8, unsafe.Pointer(&src[0]), bytes); err != cu.InvalidValue {
		t.Fatalf("a copy past the allocation: %v", err)
	}
	if err := cu.MemcpyHtoD(p, unsafe.Pointer(&src[0]), -1); err != cu.InvalidValue {
		t.Fatalf("a negative size: %v", err)
	}
	managed, err := cu.MemAllocManaged(bytes, cu.AttachGlobal)
	if err != nil {
		t.Fatalf("MemAllocManaged: %v", err)
	}
	if err := cu.MemcpyDtoD(managed, p, bytes); err != nil {
		t.Fatalf("MemcpyDtoD: %v", err)
	}
	if err := cu.MemFree(p); err != nil {
		t.Fatalf("MemFree: %v", err)
	}
	if err := cu.MemFree(p); err != cu.InvalidValue {
		t.Fatalf("freeing twice: %v", err)
	}

	if _, err := cu.LoadData("not an image"); err != cu.InvalidImage {
		t.Fatalf("LoadData of garbage: %v", err)
	}
	mod, err := cu.LoadData(".version 7.8\n.target sm_90\n")
	if err != nil {
		t.Fatalf("LoadData: %v", err)
	}
	if _, err := mod.Function("no_such_kernel"); !errors.Is(err, cu.NotFound) {
		t.Fatalf("Function: %v", err)
	}
	if err := mod.Unload(); err != nil {
		t.Fatalf("Unload: %v", err)
	}
	if err := mod.Unload(); err != cu.InvalidHandle {
		t.Fatalf("Unload twice: %v", err)
	}

	testBatch(t, dev, cuctx, managed, src)
}

// testBatch queues copies in a batched context and processes them on another goroutine (and
// OS thread), where the batch makes its context current.
func testBatch(t *testing.T, dev cu.Device, cuctx cu.CUContext, managed cu.DevicePtr, src []float64) {
	ctx := cu.CtxFromCUContext(dev, cuctx, cu.SchedAuto)
	b := cu.NewBatchedContext(ctx, dev)
	bytes := int64(8 * len(src))
	q, err := b.MemAlloc(bytes)
	if err != nil {
		t.Fatalf("batched MemAlloc: %v", err)
	}
	got := make([]float64, len(src))
	b.MemcpyHtoD(q, unsafe.Pointer(&src[0]), bytes)
	b.Memcpy(managed, q, bytes)
	b.MemcpyDtoH(unsafe.Pointer(&got[0]), managed, bytes)
	b.Synchronize()
	if got[0] != 0 {
		t.Fatal("a queued copy ran before DoWork")
	}
	done := make(chan error)
	go func() {
		b.DoWork()
		done <- b.Errors()
	}()
	if err := <-done; err != nil {
		t.Fatalf("batch: %v", err)
	}
	for i := range src {
		if got[i] != src[i] {
			t.Fatalf("batched copies: %v, want %v", got, src)
		}
	}

	// A failed call is reported with its place in the batch, and stays reported until the
	// next batch: an empty DoWork processes nothing.
	b.Synchronize()
	b.MemcpyHtoD(q+8, unsafe.Pointer(&src[0]), bytes)
	b.DoWork()
	var be *cu.BatchError
	err = b.Errors()
	if !errors.As(err, &be) || be.Calls != 2 || len(be.Failed) != 1 || be.Failed[0].Index != 1 ||
		be.Failed[0].Call != "cuMemcpyHtoD" || !errors.Is(err, cu.InvalidValue) {
		t.Fatalf("Errors: %v", err)
	}
	t.Logf("a failed batch: %v", err)
	b.DoWork()
	if b.Errors() == nil {
		t.Fatal("an empty DoWork cleared the last batch's errors")
	}
	b.Synchronize()
	b.DoWork()
	if err := b.Errors(); err != nil {
		t.Fatalf("a good batch after a failed one: %v", err)
	}
	// Kernel parameters are checked before the driver sees them.
	b.LaunchKernel(cu.Function{}, 1, 1, 1, 1, 1, 1, 0, cu.NoStream, []unsafe.Pointer{nil})
	b.DoWork()
	if !errors.Is(b.Errors(), cu.InvalidValue) {
		t.Fatalf("a nil kernel parameter: %v", b.Errors())
	}

	// Do runs functions on the goroutine of Run, where the context is current.
	errc := make(chan error)
	go ctx.Run(errc)
	if err := <-errc; err != nil {
		t.Fatalf("Run: %v", err)
	}
	var onRun cu.CUContext
	if err := ctx.Do(func() (err error) { onRun, err = cu.CurrentContext(); return err }); err != nil || onRun != cuctx {
		t.Fatalf("Do: %v, context %v, want %v", err, onRun, cuctx)
	}
	// Run processes the queue when signalled and sends a failed batch's errors.
	batchErrs, runDone := make(chan error), make(chan error)
	go func() { runDone <- b.Run(batchErrs) }()
	b.MemcpyDtoH(unsafe.Pointer(&got[0]), q+8, bytes)
	b.Signal()
	if err := <-batchErrs; !errors.Is(err, cu.InvalidValue) {
		t.Fatalf("Run's batch error: %v", err)
	}
	b.MemFree(q)
	b.DoWork()
	if err := b.Errors(); err != nil {
		t.Fatalf("batched MemFree: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-runDone; err != nil {
		t.Fatalf("Run after Close: %v", err)
	}
	if err := ctx.Do(func() error { return nil }); err != cu.ErrClosed {
		t.Fatalf("Do after Close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close twice: %v", err)
	}
}
