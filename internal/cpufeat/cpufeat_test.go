package cpufeat

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestAgreesWithCPUInfo: on Linux/amd64 the detection agrees with the flags the kernel
// reports in /proc/cpuinfo (which include the operating system's own support).
func TestAgreesWithCPUInfo(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("compares with /proc/cpuinfo, which %s/%s does not have", runtime.GOOS, runtime.GOARCH)
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	var flags map[string]bool
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = map[string]bool{}
			for _, f := range strings.Fields(v) {
				flags[f] = true
			}
			break
		}
	}
	if flags == nil {
		t.Skip("no flags line in /proc/cpuinfo")
	}
	if AVX != flags["avx"] {
		t.Errorf("AVX = %v, /proc/cpuinfo avx = %v", AVX, flags["avx"])
	}
	if AVX2 != flags["avx2"] {
		t.Errorf("AVX2 = %v, /proc/cpuinfo avx2 = %v", AVX2, flags["avx2"])
	}
	if AVX2 && !AVX {
		t.Error("AVX2 without AVX")
	}
}
