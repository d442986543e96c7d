package readme_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// flagNameArg gives, for each flag-defining method of package flag and of *flag.FlagSet,
// the position of its name argument: Int(name, …), IntVar(p, name, …), Var(value, name, …).
var flagNameArg = map[string]int{
	"Bool": 0, "Int": 0, "Int64": 0, "Uint": 0, "Uint64": 0, "String": 0, "Float64": 0, "Duration": 0,
	"Func": 0, "BoolFunc": 0,
	"BoolVar": 1, "IntVar": 1, "Int64Var": 1, "UintVar": 1, "Uint64Var": 1, "StringVar": 1,
	"Float64Var": 1, "DurationVar": 1, "Var": 1, "TextVar": 1,
}

// exampleFlags returns the flags the example in ../X defines, read from its non-test Go
// files (the calls to flag's defining methods with a literal name), plus h and help, which
// the flag package answers itself. Parsing the source keeps this fast: no build, no run.
func exampleFlags(t *testing.T, example string) map[string]bool {
	t.Helper()
	dir := filepath.Join("..", example)
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	flags := map[string]bool{"h": true, "help": true}
	fset := token.NewFileSet()
	n := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			i, ok := flagNameArg[sel.Sel.Name]
			if !ok || len(call.Args) <= i+1 { // name and at least a usage string follow
				return true
			}
			lit, ok := call.Args[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			name, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			flags[name] = true
			n++
			return true
		})
	}
	require.NotZero(t, n, "no flag definitions found in %s", dir)
	return flags
}

// readmeFlagUses returns, per example, the flags README.md names for it: the flag lists
// of its row in the Examples table (every `-x …` code span there) and the flags written
// after `go run ./examples/X` in commands anywhere in the README.
func readmeFlagUses(t *testing.T, readme string) map[string][]string {
	t.Helper()
	uses := map[string][]string{}
	add := func(example, field string) {
		if strings.HasPrefix(field, "-") {
			uses[example] = append(uses[example], strings.TrimLeft(field, "-"))
		}
	}
	i := strings.Index(readme, "\n## Examples\n")
	require.GreaterOrEqual(t, i, 0, "README.md has no Examples section")
	section := readme[i:]
	if j := strings.Index(section[1:], "\n## "); j >= 0 {
		section = section[:j+1]
	}
	row := regexp.MustCompile("^\\| `go run \\./examples/([a-z]+)` \\|(.*)\\|$")
	span := regexp.MustCompile("`([^`]*)`")
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		uses[m[1]] = append(uses[m[1]], []string(nil)...) // listed even without flags: its source is read
		for _, s := range span.FindAllStringSubmatch(m[2], -1) {
			for _, f := range strings.Fields(s[1]) {
				add(m[1], f)
			}
		}
	}
	require.NotZero(t, rows, "no rows found in the README's Examples table")
	commandFlagUses(readme, uses)
	return uses
}

// commandFlagUses adds to uses the flags written after `go run ./examples/X` in the
// commands of a document, in code spans and code blocks:
// `go run [-tags x] ./examples/X -a v -b`.
func commandFlagUses(doc string, uses map[string][]string) {
	cmd := regexp.MustCompile("go run (?:-tags [a-z,]+ )?\\./examples/([a-z]+)((?: [^`\n|]*)?)")
	for _, m := range cmd.FindAllStringSubmatch(doc, -1) {
		for _, f := range strings.Fields(m[2]) {
			if f == "#" || f == "&&" || f == "|" || f == ">" || f == "2>&1" || f == ";" {
				break // a comment or another command follows
			}
			if strings.HasPrefix(f, "-") {
				uses[m[1]] = append(uses[m[1]], strings.TrimLeft(f, "-"))
			}
		}
	}
}

// TestReadmeExampleFlags: every flag README.md names for an example, in the Examples
// table's flag lists or in a `go run ./examples/X -flag` command, and every flag of such a
// command in docs/*.md, is defined by that example, so the docs never tell a reader to type
// a flag the command refuses.
func TestReadmeExampleFlags(t *testing.T) {
	uses := readmeFlagUses(t, readFile(t, readmePath))
	for _, doc := range docFiles(t)[1:] {
		commandFlagUses(readFile(t, doc), uses)
	}
	require.Contains(t, uses, "curvature")
	require.Contains(t, uses["curvature"], "epochs", "the curvature row's flag list was not parsed")
	examples := make([]string, 0, len(uses))
	for ex := range uses {
		examples = append(examples, ex)
	}
	sort.Strings(examples)
	for _, ex := range examples {
		defined := exampleFlags(t, ex)
		for _, f := range uses[ex] {
			require.True(t, defined[f], "README.md names -%s for ./examples/%s, which has no such flag", f, ex)
		}
	}
}

// TestExampleFlagsParser: the source reader finds the flags of both styles of definition
// (flag.IntVar and fs.Var with a custom Value) and nothing else, so a flag README.md names
// wrongly would be caught.
func TestExampleFlagsParser(t *testing.T) {
	curv := exampleFlags(t, "curvature")
	for _, f := range []string{"n", "K", "P", "epochs", "tau", "lambda", "seed", "out", "gpu"} {
		require.True(t, curv[f], "-%s of curvature", f)
	}
	require.False(t, curv["bug"])
	require.False(t, curv["quick"])
	require.True(t, exampleFlags(t, "gradcheck")["bug"])
	require.True(t, exampleFlags(t, "bench")["quick"])
	require.True(t, exampleFlags(t, "autotune")["tau"])

	uses := readmeFlagUses(t, "x\n## Examples\n\n| command | what |\n|---|---|\n"+
		"| `go run ./examples/gradcheck` | flags `-bug -seed` and `-nosuch` (`-h`) |\n\n## Next\n"+
		"run `go run ./examples/bench -md -repeat 5` or `go run -tags gatejetcuda ./examples/curvature -gpu required`\n")
	require.Equal(t, []string{"bug", "seed", "nosuch", "h"}, uses["gradcheck"])
	require.Equal(t, []string{"md", "repeat"}, uses["bench"])
	require.Equal(t, []string{"gpu"}, uses["curvature"])
}
