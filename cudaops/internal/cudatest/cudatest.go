// Package cudatest holds the scaffolding of the CUDA tests that run without a GPU (cudaops,
// cudrv, nvrtccomp, gorgoniastd): the CUDA 11.8 tools of .ci/cuda-tools they need, whose
// absence skips a test (or fails it where CI requires the tool), and child runs of a test
// binary with another environment, since the driver and NVRTC load once per process. It is
// imported by tests only, and imports no CUDA binding so that cudrv's own tests can use it.
package cudatest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Files of the CUDA root of .ci/cuda-tools (GATEJET_CUDA_ROOT), for ToolkitFile.
const (
	// StubDriver is the toolkit's libcuda.so, for linking only: every call fails, cuInit first.
	StubDriver = "usr/lib/x86_64-linux-gnu/stubs/libcuda.so"
	// NVRTCLib is NVRTC 11.8 under its soname.
	NVRTCLib = "usr/lib/x86_64-linux-gnu/libnvrtc.so.11.2"
)

const toolsHint = `eval "$(bash .ci/cuda-tools)"`

// NeedNVRTC skips t when NVRTC did not load (err, from cudrv.LoadNVRTC), or fails it under
// GATEJET_REQUIRE_NVRTC=1 (CI).
func NeedNVRTC(t testing.TB, err error) {
	t.Helper()
	need(t, "GATEJET_REQUIRE_NVRTC", "NVRTC", err, " ("+toolsHint+" or GATEJET_NVRTC_LIB)")
}

// Ptxas is the path of ptxas on PATH; without one t is skipped, or fails under
// GATEJET_REQUIRE_PTXAS=1 (CI).
func Ptxas(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("ptxas")
	need(t, "GATEJET_REQUIRE_PTXAS", "ptxas on PATH", err, "")
	return path
}

// need skips t, saying what it needs, where to get it (hint) and why it is missing, when err is
// not nil, or fails it when the environment variable env is 1.
func need(t testing.TB, env, what string, err error, hint string) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv(env) == "1" {
		t.Fatalf("%s is required (%s=1): %v", what, env, err)
	}
	t.Skipf("needs %s%s: %v", what, hint, err)
}

// ToolkitFile is the path of rel under the CUDA root of .ci/cuda-tools (GATEJET_CUDA_ROOT);
// without it t is skipped.
func ToolkitFile(t testing.TB, rel string) string {
	t.Helper()
	root := os.Getenv("GATEJET_CUDA_ROOT")
	p := filepath.Join(root, rel)
	if _, err := os.Stat(p); root == "" || err != nil {
		t.Skipf("no %s under GATEJET_CUDA_ROOT (%s)", rel, toolsHint)
	}
	return p
}

// Rerun runs the named tests of this test binary in a new process whose environment is this
// one's with env added, and returns its output; t fails unless the child succeeds and each of
// the tests passed in it.
func Rerun(t testing.TB, tests []string, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^("+strings.Join(tests, "|")+")$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, name := range tests {
		require.Contains(t, string(out), "--- PASS: "+name+" ", "%s", out)
	}
	return string(out)
}
