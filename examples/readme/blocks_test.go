package readme_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const readmePath = "../../README.md"

// fencedBlocks returns the bodies of the README's fenced code blocks with the given info
// string ("go", "sh", …).
func fencedBlocks(t *testing.T, readme, lang string) []string {
	t.Helper()
	var blocks []string
	var cur []string
	in := false
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case !in && line == "```"+lang:
			in, cur = true, nil
		case in && line == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, line)
		}
	}
	require.False(t, in, "unterminated code block in README.md")
	return blocks
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestReadmeGoBlocksAreExamples: every ```go block of README.md is the body of a testable
// example in readme_test.go, verbatim (indented by one tab there), so it compiles and its
// "// Output:" lines are checked by go test.
func TestReadmeGoBlocksAreExamples(t *testing.T) {
	readme := readFile(t, readmePath)
	source := readFile(t, "readme_test.go")
	blocks := fencedBlocks(t, readme, "go")
	require.GreaterOrEqual(t, len(blocks), 5, "the README's tour has lost its code")
	for i, b := range blocks {
		lines := strings.Split(b, "\n")
		for j, l := range lines {
			if l != "" {
				lines[j] = "\t" + l
			}
		}
		body := strings.Join(lines, "\n")
		require.True(t, strings.Contains(source, "\n"+body+"\n}\n"),
			"README.md ```go block %d is not the whole body of an example in readme_test.go:\n%s", i+1, b)
	}
	// And every example here is in the README (none left behind after an edit there).
	require.Equal(t, len(blocks), strings.Count(source, "\nfunc Example"))
}

// TestReadmeCommands: the README opens with the two commands, exactly, in one block.
func TestReadmeCommands(t *testing.T) {
	readme := readFile(t, readmePath)
	sh := fencedBlocks(t, readme, "sh")
	require.NotEmpty(t, sh)
	require.Equal(t, "go run ./examples/curvature\ngo test ./...", sh[0])
	require.Less(t, strings.Index(readme, "```sh\ngo run ./examples/curvature"), strings.Index(readme, "## "),
		"the commands come before the first section")
}

// TestReadmePinnedVersion: the go4.org line the README tells users to copy is the one
// go.mod requires.
func TestReadmePinnedVersion(t *testing.T) {
	readme := readFile(t, readmePath)
	gomod := readFile(t, "../../go.mod")
	re := regexp.MustCompile(`go4\.org/unsafe/assume-no-moving-gc (v\S+)`)
	want := re.FindStringSubmatch(gomod)
	require.NotNil(t, want, "go.mod no longer requires go4.org/unsafe/assume-no-moving-gc")
	require.Contains(t, readme, "require go4.org/unsafe/assume-no-moving-gc "+want[1]+"\n")
}

// TestReadmeLinks: relative links in the README point at files that exist.
func TestReadmeLinks(t *testing.T) {
	readme := readFile(t, readmePath)
	links := regexp.MustCompile(`\]\(([^)#]+)\)`).FindAllStringSubmatch(readme, -1)
	require.NotEmpty(t, links)
	for _, l := range links {
		target := l[1]
		if strings.Contains(target, "://") {
			continue
		}
		_, err := os.Stat(filepath.Join("../..", filepath.FromSlash(target)))
		require.NoError(t, err, "README link %q", target)
	}
}

// TestReadmeExamplesExist: every `go run ./examples/…` the README mentions is a main
// package here with a test.
func TestReadmeExamplesExist(t *testing.T) {
	readme := readFile(t, readmePath)
	cmds := regexp.MustCompile("go run (\\./examples/[a-z]+)").FindAllStringSubmatch(readme, -1)
	require.NotEmpty(t, cmds)
	for _, c := range cmds {
		dir := filepath.Join("../..", filepath.FromSlash(c[1]))
		if c[1] == "./examples/bench" {
			continue // another engineer's; the README only points at it
		}
		require.FileExists(t, filepath.Join(dir, "main.go"), c[1])
		require.FileExists(t, filepath.Join(dir, "main_test.go"), c[1])
	}
}
