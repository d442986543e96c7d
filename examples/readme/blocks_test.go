package readme_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

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

// exampleDocs are the documents whose ```go blocks are testable examples in readme_test.go.
var exampleDocs = []string{readmePath, "../../docs/tour.md", "../../docs/errors.md"}

// isProgram reports whether a ```go block is a complete program (the README's example,
// which install_test.go builds and runs in a module of its own) rather than an example body.
func isProgram(block string) bool {
	return strings.HasPrefix(block, "package main\n")
}

// TestDocGoBlocksAreExamples: every ```go block of README.md, docs/tour.md and
// docs/errors.md is the body of a testable example in readme_test.go, verbatim (indented by
// one tab there), so it compiles and its "// Output:" lines are checked by go test; the one
// exception is the README's complete program, which TestInstallFromFreshModule runs.
func TestDocGoBlocksAreExamples(t *testing.T) {
	source := readFile(t, "readme_test.go")
	examples, programs := 0, 0
	for _, doc := range exampleDocs {
		blocks := fencedBlocks(t, readFile(t, doc), "go")
		for i, b := range blocks {
			if isProgram(b) {
				require.Equal(t, readmePath, doc, "%s: a complete program outside the README is not run by any test", doc)
				programs++
				continue
			}
			lines := strings.Split(b, "\n")
			for j, l := range lines {
				if l != "" {
					lines[j] = "\t" + l
				}
			}
			body := strings.Join(lines, "\n")
			require.True(t, strings.Contains(source, "\n"+body+"\n}\n"),
				"%s ```go block %d is not the whole body of an example in readme_test.go:\n%s", doc, i+1, b)
			examples++
		}
	}
	require.Equal(t, 1, programs, "the README holds one complete program")
	require.GreaterOrEqual(t, examples, 9, "the tour has lost its code")
	// And every example here is in a document (none left behind after an edit there).
	require.Equal(t, examples, strings.Count(source, "\nfunc Example"))
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

// TestReadmeFirstScreen: the README fits a five-minute read, and before its first section
// it says the two things a Gorgonia user must know first: second order needs graphs.Grad,
// and gorgonia.SoftMax is replaced by ops.Softmax.
func TestReadmeFirstScreen(t *testing.T) {
	readme := readFile(t, readmePath)
	require.LessOrEqual(t, strings.Count(readme, "\n"), 200, "README.md is longer than 200 lines: move material to docs/")
	first := readme[:strings.Index(readme, "\n## ")]
	for _, s := range []string{"`graphs.Grad", "`gorgonia.Grad`", "`ops.Softmax(x, -1)`", "`gorgonia.SoftMax"} {
		require.Contains(t, first, s, "the README's first screen does not mention %s", s)
	}
}

// TestReadmePinnedVersion: the go4.org version the README tells users to keep is the one
// go.mod requires.
func TestReadmePinnedVersion(t *testing.T) {
	readme := readFile(t, readmePath)
	gomod := readFile(t, "../../go.mod")
	re := regexp.MustCompile(`go4\.org/unsafe/assume-no-moving-gc\s+(v\S+)`)
	want := re.FindStringSubmatch(gomod)
	require.NotNil(t, want, "go.mod no longer requires go4.org/unsafe/assume-no-moving-gc")
	got := re.FindAllStringSubmatch(readme, -1)
	require.NotEmpty(t, got, "the README does not name the go4.org version")
	for _, g := range got {
		require.Equal(t, want[1], strings.TrimSuffix(g[1], "`"))
	}
}

// docFiles returns README.md and every Markdown file under docs/, as paths from here.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, docs)
	return append([]string{readmePath}, docs...)
}

// headingAnchors returns the anchors GitHub gives the headings of a Markdown document:
// the heading's text in lower case, without punctuation but hyphens and underscores, spaces
// turned into hyphens, and -1, -2, … appended to repeats. Headings inside code blocks are not
// headings.
func headingAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// mdLink matches a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks: every relative link in README.md and docs/*.md points at a file or folder
// that exists, and a #fragment into a Markdown file at one of its headings.
func TestDocLinks(t *testing.T) {
	n := 0
	for _, doc := range docFiles(t) {
		text := readFile(t, doc)
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			file, fragment, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), filepath.FromSlash(file))
				_, err := os.Stat(path)
				require.NoError(t, err, "%s links to %q, which does not exist", doc, target)
			}
			if fragment != "" && strings.HasSuffix(path, ".md") {
				require.True(t, headingAnchors(readFile(t, path))[fragment],
					"%s links to %q: %s has no heading with that anchor", doc, target, path)
			}
		}
	}
	require.Greater(t, n, 10, "no links found")
}

// TestHeadingAnchors: the anchors are GitHub's.
func TestHeadingAnchors(t *testing.T) {
	a := headingAnchors("# A tour of gatejet's API\n## Where it runs: CPU or GPU\n```sh\n# not a heading\n```\n" +
		"### Second order: a gradient of a gradient\n## `ops.Softmax` and log_softmax\n## Notes\n## Notes\n")
	for _, want := range []string{"a-tour-of-gatejets-api", "where-it-runs-cpu-or-gpu",
		"second-order-a-gradient-of-a-gradient", "opssoftmax-and-log_softmax", "notes", "notes-1"} {
		require.True(t, a[want], want)
	}
	require.False(t, a["not-a-heading"])
}

// TestReadmeLinksEveryDoc: the README's Documentation section links every document under
// docs/, so none is orphaned.
func TestReadmeLinksEveryDoc(t *testing.T) {
	readme := readFile(t, readmePath)
	i := strings.Index(readme, "\n## Documentation\n")
	require.GreaterOrEqual(t, i, 0, "README.md has no Documentation section")
	section := readme[i:]
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	for _, d := range docs {
		name := "docs/" + filepath.Base(d)
		require.Contains(t, section, "]("+name+")", "README.md's Documentation section does not link %s", name)
	}
}

// TestReadmeExamplesExist: every `go run ./examples/…` the README or docs/*.md mention is a
// main package here with a test.
func TestReadmeExamplesExist(t *testing.T) {
	var cmds [][]string
	for _, doc := range docFiles(t) {
		cmds = append(cmds, regexp.MustCompile("go run (?:-tags [a-z,]+ )?(\\./examples/[a-z]+)").FindAllStringSubmatch(readFile(t, doc), -1)...)
	}
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
