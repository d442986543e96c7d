package readme_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// between returns the text of s from the line that starts with begin to the line that
// starts with end, both excluded.
func between(t *testing.T, s, begin, end string) string {
	t.Helper()
	i := strings.Index(s, "\n"+begin)
	require.GreaterOrEqual(t, i, 0, "README.md has no %q marker", begin)
	i += strings.Index(s[i+1:], "\n") + 2
	j := strings.Index(s[i:], "\n"+end)
	require.GreaterOrEqual(t, j, 0, "README.md has no %q marker after %q", end, begin)
	return s[i : i+j+1]
}

// installSection returns the README's install commands (the one ```sh block between the
// INSTALL markers), its complete example program and the output it says the program prints
// (the ```go and ```text blocks between the EXAMPLE markers).
func installSection(t *testing.T, readme string) (commands, program, output string) {
	t.Helper()
	install := fencedBlocks(t, between(t, readme, "<!-- BEGIN INSTALL", "<!-- END INSTALL"), "sh")
	require.Len(t, install, 1, "one ```sh block between the INSTALL markers")
	example := between(t, readme, "<!-- BEGIN EXAMPLE", "<!-- END EXAMPLE")
	prog := fencedBlocks(t, example, "go")
	out := fencedBlocks(t, example, "text")
	require.Len(t, prog, 1, "one ```go block between the EXAMPLE markers")
	require.Len(t, out, 1, "one ```text block (the output) between the EXAMPLE markers")
	return install[0], prog[0], out[0]
}

// goEnv is the environment for the go commands a user would type: this one, with no
// go.work, no toolchain switch (offline), and no -mod flag in GOFLAGS, so that the fresh
// module's go.mod and go.sum are what the commands find (-mod=mod would let `go run` repair
// a go.mod that the README's commands left wrong). GOPROXY and the module cache are the
// environment's: in CI `go mod download` has filled the cache with every module gatejet's
// go.sum names, which is all a fresh module that imports gatejet needs.
func goEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "GOWORK="), strings.HasPrefix(kv, "GOTOOLCHAIN="):
		case strings.HasPrefix(kv, "GOFLAGS="):
			var keep []string
			for _, f := range strings.Fields(strings.TrimPrefix(kv, "GOFLAGS=")) {
				if !strings.HasPrefix(f, "-mod=") {
					keep = append(keep, f)
				}
			}
			env = append(env, "GOFLAGS="+strings.Join(keep, " "))
		default:
			env = append(env, kv)
		}
	}
	return append(env, "GOWORK=off", "GOTOOLCHAIN=local")
}

// TestInstallFromFreshModule follows the README's install section in a new directory: it
// saves the README's complete example as main.go, runs the install block exactly as written
// with sh -e (only the clone path ../gatejet replaced by this checkout), and checks that the
// program prints what the README says and that go.mod holds the versions the README names.
// With a warm build cache it takes about a second: the packages of this checkout are
// compiled from the same directory as `go test ./...` compiles them.
func TestInstallFromFreshModule(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("skipped: the go command is not on PATH (%v); the install recipe needs it", err)
	}
	readme := readFile(t, readmePath)
	commands, program, output := installSection(t, readme)
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(commands, "../gatejet"), "the install block names the clone path ../gatejet once")
	script := strings.Replace(commands, "../gatejet", root, 1)

	dir := filepath.Join(t.TempDir(), "hello")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(program+"\n"), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-ex", "-c", script)
	cmd.Dir = dir
	cmd.Env = goEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	require.NoError(t, err, "the README's install block failed in a fresh module (sh -x trace and go's messages):\n%s", stderr.String())
	require.Equal(t, output+"\n", stdout.String(), "the example printed something other than the README's output")

	gomod := readFile(t, filepath.Join(dir, "go.mod"))
	require.Contains(t, gomod, "replace github.com/gatejet/gatejet => "+root)
	for _, mod := range []string{"github.com/gatejet/gatejet", "go4.org/unsafe/assume-no-moving-gc"} {
		quoted := regexp.QuoteMeta(mod)
		claim := regexp.MustCompile("`" + quoted + `\s+(v\S+?)(?: // indirect)?` + "`").FindStringSubmatch(readme)
		require.NotNil(t, claim, "the README does not say which version of %s tidy writes", mod)
		got := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + quoted + `\s+(v\S+)`).FindStringSubmatch(gomod)
		require.NotNil(t, got, "go.mod requires no %s:\n%s", mod, gomod)
		require.Equal(t, claim[1], got[1], "the version of %s that go mod tidy wrote", mod)
	}
}

// TestInstallTidyBeforeCode: the README warns that `go mod tidy` in a module with no code
// that imports gatejet drops a gatejet requirement; this holds it to that.
func TestInstallTidyBeforeCode(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("skipped: the go command is not on PATH (%v)", err)
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-ex", "-c", `go mod init example.com/empty
go mod edit -require=github.com/gatejet/gatejet@v0.0.0 -replace=github.com/gatejet/gatejet="$ROOT"
go mod tidy`)
	cmd.Dir = dir
	cmd.Env = append(goEnv(), "ROOT="+root)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NotContains(t, readFile(t, filepath.Join(dir, "go.mod")), "require", "tidy kept a requirement in a module without code")
}
