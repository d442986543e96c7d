//go:build gatejetcuda || cuda

package nvrtccomp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/cudaops/internal/cudatest"
)

// resourcesFile holds the per-entry resource limits checked by TestCUDAPtxasResources.
const resourcesFile = "../../kernels/resources.json"

// Usage is what ptxas -v reports for one entry point.
type Usage struct {
	Registers   int `json:"registers"`
	SharedBytes int `json:"smem"` // static shared memory (the kernels use dynamic shared memory only)
	StackBytes  int `json:"stack"`
	SpillStores int `json:"spill_stores"`
	SpillLoads  int `json:"spill_loads"`
}

// Resources is the layout of resources.json.
type Resources struct {
	Doc          []string                    `json:"doc"`
	MaxRegisters int                         `json:"max_registers"`
	Exceptions   map[string]string           `json:"spill_exceptions"` // "arch/entry" → reason
	Archs        map[string]map[string]Usage `json:"archs"`            // arch → entry → recorded usage
}

var (
	ptxasEntryRE = regexp.MustCompile(`Compiling entry function '([A-Za-z0-9_]+)' for '(sm_[0-9]+)'`)
	ptxasPropsRE = regexp.MustCompile(`Function properties for ([A-Za-z0-9_]+)`)
	ptxasFrameRE = regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
	ptxasUsedRE  = regexp.MustCompile(`Used (\d+) registers`)
	ptxasSmemRE  = regexp.MustCompile(`(\d+) bytes smem`)
)

// parsePtxas reads ptxas -v output into per-entry usage.
func parsePtxas(out string) (map[string]Usage, error) {
	got := map[string]Usage{}
	entry, props := "", ""
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	for _, line := range strings.Split(out, "\n") {
		if m := ptxasEntryRE.FindStringSubmatch(line); m != nil {
			entry = m[1]
			got[entry] = Usage{}
			continue
		}
		if m := ptxasPropsRE.FindStringSubmatch(line); m != nil {
			props = m[1]
			continue
		}
		if m := ptxasFrameRE.FindStringSubmatch(line); m != nil {
			if u, ok := got[props]; ok {
				u.StackBytes, u.SpillStores, u.SpillLoads = atoi(m[1]), atoi(m[2]), atoi(m[3])
				got[props] = u
			}
			continue
		}
		if m := ptxasUsedRE.FindStringSubmatch(line); m != nil && entry != "" {
			u := got[entry]
			u.Registers = atoi(m[1])
			if s := ptxasSmemRE.FindStringSubmatch(line); s != nil {
				u.SharedBytes = atoi(s[1])
			}
			got[entry] = u
			entry = ""
		}
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("no entry functions in ptxas output:\n%s", out)
	}
	return got, nil
}

// TestCUDAPtxasResources assembles every module for sm_80 and sm_90 with ptxas -v and checks
// each entry point's registers, spills, stack and static shared memory against
// cudaops/kernels/resources.json: no spills (unless listed, with a reason, in
// spill_exceptions, and then no more than recorded), no more registers than recorded nor than
// max_registers (__launch_bounds__(256)), and no more stack or shared memory than recorded. It
// prints the table (go test -v). It needs ptxas on PATH: without it the test is skipped, or
// fails when GATEJET_REQUIRE_PTXAS=1 (CI). GATEJET_RESOURCES_RECORD=1 rewrites the recorded
// values with today's (exceptions and doc are kept), for a deliberate change of the kernels.
func TestCUDAPtxasResources(t *testing.T) {
	needNVRTC(t)
	ptxas := cudatest.Ptxas(t)
	ver, _ := exec.Command(ptxas, "--version").CombinedOutput()
	t.Logf("%s", bytes.TrimSpace(ver))

	raw, err := os.ReadFile(resourcesFile)
	require.NoError(t, err)
	var limits Resources
	require.NoError(t, json.Unmarshal(raw, &limits))

	dir := t.TempDir()
	today := map[string]map[string]Usage{}
	for _, arch := range []string{"sm_80", "sm_90"} {
		today[arch] = map[string]Usage{}
		for _, m := range modules() {
			name, ptx, err := compileModule(m, arch)
			require.NoError(t, err, name)
			file := filepath.Join(dir, strings.TrimSuffix(name, ".cu")+".ptx")
			require.NoError(t, os.WriteFile(file, []byte(ptx), 0o644))
			out, err := exec.Command(ptxas, "-v", "-arch="+arch, "-o", os.DevNull, file).CombinedOutput()
			require.NoError(t, err, "ptxas %s:\n%s", name, out)
			got, err := parsePtxas(string(out))
			require.NoError(t, err, name)
			for e, u := range got {
				today[arch][e] = u
			}
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %-36s %5s %6s %6s %7s %7s\n", "arch", "entry", "regs", "smem", "stack", "spill-st", "spill-ld")
	for _, arch := range sortedKeys(today) {
		for _, e := range sortedKeys(today[arch]) {
			u := today[arch][e]
			fmt.Fprintf(&b, "%-6s %-36s %5d %6d %6d %7d %7d\n", arch, e, u.Registers, u.SharedBytes, u.StackBytes, u.SpillStores, u.SpillLoads)
		}
	}
	t.Logf("ptxas -v resource usage:\n%s", b.String())

	if os.Getenv("GATEJET_RESOURCES_RECORD") == "1" {
		limits.Archs = today
		out, err := formatResources(limits)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(resourcesFile, out, 0o644))
		t.Logf("recorded today's values in %s", resourcesFile)
	}

	for _, arch := range sortedKeys(today) {
		rec, ok := limits.Archs[arch]
		require.True(t, ok, "%s: no limits recorded for %s", resourcesFile, arch)
		for _, e := range sortedKeys(today[arch]) {
			u, key := today[arch][e], arch+"/"+e
			r, ok := rec[e]
			if !ok {
				t.Errorf("%s: %s has no recorded limits (a new kernel? record it: GATEJET_RESOURCES_RECORD=1)", resourcesFile, key)
				continue
			}
			if u.Registers > limits.MaxRegisters || u.Registers > r.Registers {
				t.Errorf("%s: %d registers, limit %d (recorded %d, max %d)", key, u.Registers, min(r.Registers, limits.MaxRegisters), r.Registers, limits.MaxRegisters)
			}
			if u.StackBytes > r.StackBytes {
				t.Errorf("%s: %d bytes stack frame, recorded %d", key, u.StackBytes, r.StackBytes)
			}
			if u.SharedBytes > r.SharedBytes {
				t.Errorf("%s: %d bytes static shared memory, recorded %d", key, u.SharedBytes, r.SharedBytes)
			}
			reason, excepted := limits.Exceptions[key]
			spills := u.SpillStores > 0 || u.SpillLoads > 0
			switch {
			case spills && !excepted:
				t.Errorf("%s spills (%d bytes stores, %d bytes loads): spills are not allowed", key, u.SpillStores, u.SpillLoads)
			case spills && (u.SpillStores > r.SpillStores || u.SpillLoads > r.SpillLoads):
				t.Errorf("%s spills more than recorded (%d/%d bytes stores/loads, recorded %d/%d; known exception: %s)",
					key, u.SpillStores, u.SpillLoads, r.SpillStores, r.SpillLoads, reason)
			case spills:
				t.Logf("KNOWN SPILL %s: %d bytes stores, %d bytes loads: %s", key, u.SpillStores, u.SpillLoads, reason)
			case excepted:
				t.Errorf("%s no longer spills: remove its entry from spill_exceptions in %s", key, resourcesFile)
			}
		}
		for e := range rec {
			if _, ok := today[arch][e]; !ok {
				t.Errorf("%s: %s/%s is recorded but not compiled (remove it)", resourcesFile, arch, e)
			}
		}
	}
}

// TestCUDAPtxasParse: the parser reads ptxas 11.8's -v format, spills and static shared
// memory included.
func TestCUDAPtxasParse(t *testing.T) {
	out := `ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'gj_a_f32' for 'sm_90'
ptxas info    : Function properties for gj_a_f32
    8 bytes stack frame, 12 bytes spill stores, 16 bytes spill loads
ptxas info    : Used 255 registers, 32 bytes smem, 464 bytes cmem[0]
ptxas info    : Compiling entry function 'gj_b_f64' for 'sm_90'
ptxas info    : Function properties for gj_b_f64
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, 464 bytes cmem[0]
`
	got, err := parsePtxas(out)
	require.NoError(t, err)
	require.Equal(t, map[string]Usage{
		"gj_a_f32": {Registers: 255, SharedBytes: 32, StackBytes: 8, SpillStores: 12, SpillLoads: 16},
		"gj_b_f64": {Registers: 40},
	}, got)
	_, err = parsePtxas("ptxas fatal : nothing")
	require.Error(t, err)
}

// formatResources writes r as indented JSON with one line per entry point.
func formatResources(r Resources) ([]byte, error) {
	var b bytes.Buffer
	line := func(prefix string, v any, suffix string) error {
		j, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.WriteString(prefix)
		b.Write(j)
		b.WriteString(suffix)
		return nil
	}
	b.WriteString("{\n  \"doc\": [\n")
	for i, d := range r.Doc {
		if err := line("    ", d, map[bool]string{true: "\n", false: ",\n"}[i == len(r.Doc)-1]); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(&b, "  ],\n  \"max_registers\": %d,\n  \"spill_exceptions\": {", r.MaxRegisters)
	for i, k := range sortedKeys(r.Exceptions) {
		sep := ",\n"
		if i == 0 {
			sep = "\n"
		}
		if err := line(sep+"    "+strconv.Quote(k)+": ", r.Exceptions[k], ""); err != nil {
			return nil, err
		}
	}
	b.WriteString("\n  },\n  \"archs\": {")
	for i, arch := range sortedKeys(r.Archs) {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n    %q: {", arch)
		for j, e := range sortedKeys(r.Archs[arch]) {
			sep := ",\n"
			if j == 0 {
				sep = "\n"
			}
			if err := line(fmt.Sprintf("%s      %q: ", sep, e), r.Archs[arch][e], ""); err != nil {
				return nil, err
			}
		}
		b.WriteString("\n    }")
	}
	b.WriteString("\n  }\n}\n")
	var check Resources
	if err := json.Unmarshal(b.Bytes(), &check); err != nil {
		return nil, fmt.Errorf("formatResources: %w", err)
	}
	return b.Bytes(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
