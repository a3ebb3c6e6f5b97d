package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/internal/cliflag"
)

// Every command line of README.md and docs/*.md (a fenced shell line that
// starts with `loadgate `, `bin/loadgate ` or `make `) works as written, in a
// directory laid out as the docs assume: the demo stack as the user's
// (compose.yaml), README's and first-hour.md's scenarios as load/api.yaml and
// load/service.yaml, the demo's scenario as load.yaml, and examples/ (issue 48: README's soak exited 2 on README's own
// scenario, and `report` named a path `run` never writes). Nothing is built
// or sent: `loadgate check` runs whole; run, sweep and soak stop once their
// load is planned (scenario, ceilings, target and pids checked); the other
// commands once their flags parse; `make` is `make -n`. Each input path a
// line names must exist there, or be (under) the --out of a documented line.
func TestDocumentedCommandLines(t *testing.T) {
	root := repoRoot(t)
	lines := docCommandLines(t, root)
	if len(lines) < 30 {
		t.Fatalf("found %d command lines in README.md and docs/*.md; the extraction is broken", len(lines))
	}
	t.Logf("%d command lines in README.md and docs/*.md", len(lines))
	work := docWorkspace(t, root)
	t.Chdir(work)

	type input struct {
		at   string // file:line
		path string
	}
	var inputs []input
	var outs []string
	used := map[string]bool{}
	for _, l := range lines {
		at := fmt.Sprintf("%s:%d", l.file, l.line)
		if reason, ok := docSkips[l.text]; ok {
			used[l.text] = true
			t.Logf("%s: skipped: %s", at, reason)
			continue
		}
		args, err := shellWords(l.text, docVars)
		if err != nil {
			t.Errorf("%s: %s: %v", at, l.text, err)
			continue
		}
		if args[0] == "make" {
			cmd := exec.Command("make", append([]string{"-n", "-C", root}, args[1:]...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s: %s: make -n: %v\n%s", at, l.text, err, out)
			}
			continue
		}
		var seen []*flag.FlagSet
		errDry := errors.New("dry run: stopped before anything is built or sent")
		dryRun = func(point string, fs *flag.FlagSet) error {
			seen = append(seen, fs)
			switch name := fs.Name(); {
			case name == "check":
				return nil // check builds nothing: it runs whole
			case point == "flags" && (name == "run" || name == "sweep" || name == "soak"):
				return nil // on to "planned"
			}
			return errDry
		}
		var stdout, stderr bytes.Buffer
		err = run(context.Background(), args[1:], &stdout, &stderr)
		dryRun = nil
		code := exitCode(err, io.Discard)
		switch {
		case len(seen) == 0 && code == 0:
			continue // version, -h: nothing to parse further
		case len(seen) == 0:
			t.Errorf("%s: %s: exit %d before its flags parsed: %v\n%s", at, l.text, code, err, stderr.String())
			continue
		case seen[0].Name() == "check" && err != nil:
			t.Errorf("%s: %s: exit %d: %v\n%s", at, l.text, code, err, stderr.String())
		case seen[0].Name() != "check" && !errors.Is(err, errDry):
			t.Errorf("%s: %s: refused before it would start: exit %d: %v\n%s", at, l.text, code, err, stderr.String())
		}
		fs := seen[0]
		if f := fs.Lookup("out"); f != nil && f.Value.String() != "" {
			outs = append(outs, filepath.Clean(f.Value.String()))
		}
		for _, p := range docInputs(fs) {
			inputs = append(inputs, input{at, p})
		}
	}
	for _, in := range inputs {
		if _, err := os.Stat(in.path); err == nil {
			continue
		}
		if reason, ok := docGivenPaths[in.path]; ok {
			used[in.path] = true
			t.Logf("%s: %s: %s", in.at, in.path, reason)
			continue
		}
		written := slices.ContainsFunc(outs, func(o string) bool {
			p := filepath.Clean(in.path)
			return p == o || strings.HasPrefix(p, o+string(filepath.Separator))
		})
		if !written {
			t.Errorf("%s: %s: no such file, and no documented command's --out writes it", in.at, in.path)
		}
	}
	for k := range docSkips {
		if !used[k] {
			t.Errorf("docSkips: %q is no documented command line any more: drop it", k)
		}
	}
	for k := range docGivenPaths {
		if !used[k] {
			t.Errorf("docGivenPaths: %q is no documented input any more: drop it", k)
		}
	}
}

// docSkips are the documented command lines the test cannot run even dry,
// each with why (none today).
var docSkips = map[string]string{}

// docGivenPaths are input paths of documented lines that stand for the
// reader's own files, which no documented command writes, each with the doc's
// words for them.
var docGivenPaths = map[string]string{
	"b1.json": "docs/gate.md: each side's result.json of earlier runs",
	"b2.json": "docs/gate.md: each side's result.json of earlier runs",
	"b3.json": "docs/gate.md: each side's result.json of earlier runs",
	"h1.json": "docs/gate.md: each side's result.json of earlier runs",
	"h2.json": "docs/gate.md: each side's result.json of earlier runs",
	"h3.json": "docs/gate.md: each side's result.json of earlier runs",
}

// docVars are the shell variables documented lines use, as the docs mean them.
func docVars(name string) (string, bool) {
	switch name {
	case "!": // the pid of a server just started in the background
		return strconv.Itoa(os.Getpid()), true
	case "base": // ${base:-HEAD~1}: unset outside the history workflow
		return "", false
	}
	return "", false
}

// docInputs are the paths a parsed command line reads.
func docInputs(fs *flag.FlagSet) []string {
	var names []string
	switch fs.Name() {
	case "run", "gate", "sweep", "soak", "calibrate", "check", "up":
		names = []string{"scenario", "compose"}
	case "baseline save":
		names = []string{"result"}
	case "compare":
		names = []string{"base", "head"}
	case "history record", "comment":
		names = []string{"from"}
	}
	var out []string
	for _, n := range names {
		f := fs.Lookup(n)
		if f == nil {
			continue
		}
		if s, ok := f.Value.(*cliflag.Strings); ok {
			out = append(out, *s...)
		} else if v := f.Value.String(); v != "" {
			out = append(out, v)
		}
	}
	switch fs.Name() {
	case "report", "merge", "compare":
		out = append(out, fs.Args()...)
	}
	return out
}

type docLine struct {
	file string // relative to the repository
	line int
	text string
}

// docCommandLines are the command lines of README.md and docs/*.md: in a
// fence whose info string is empty, sh, bash, shell or console, a line that
// starts with `loadgate `, `bin/loadgate ` or `make ` (after a `$ ` prompt),
// continuation lines joined.
func docCommandLines(t *testing.T, root string) []docLine {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var out []docLine
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		fence, shell := "", false
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			s := strings.TrimSpace(lines[i])
			if fence == "" {
				if strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~") {
					fence = s[:3]
					info, _, _ := strings.Cut(strings.TrimSpace(s[3:]), " ")
					shell = slices.Contains([]string{"", "sh", "bash", "shell", "console"}, info)
				}
				continue
			}
			if strings.HasPrefix(s, fence) {
				fence = ""
				continue
			}
			start := i
			for strings.HasSuffix(s, "\\") && i+1 < len(lines) {
				i++
				s = strings.TrimSuffix(s, "\\") + " " + strings.TrimSpace(lines[i])
			}
			s = strings.TrimPrefix(s, "$ ")
			if shell && (strings.HasPrefix(s, "loadgate ") || strings.HasPrefix(s, "bin/loadgate ") || strings.HasPrefix(s, "make ")) {
				out = append(out, docLine{rel, start + 1, s})
			}
		}
	}
	return out
}

// docWorkspace lays out a directory as the docs assume a reader's
// repository: the demo stack's compose.yaml (its build contexts copied),
// README's scenario as load/api.yaml, first-hour.md's as load/service.yaml,
// the demo scenario as load.yaml, and examples/.
func docWorkspace(t *testing.T, root string) string {
	t.Helper()
	w := t.TempDir()
	demo := filepath.Join(root, "examples", "demo")
	if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(w, "examples")); err != nil {
		t.Fatal(err)
	}
	// Copied, not linked: a build context must lie inside the checkout.
	for _, dir := range []string{"service", "stub"} {
		if err := os.CopyFS(filepath.Join(w, dir), os.DirFS(filepath.Join(demo, dir))); err != nil {
			t.Fatal(err)
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	api, ok := yamlAfter(string(readme), "`load/api.yaml`")
	if !ok {
		t.Fatal("README.md has no ```yaml block after `load/api.yaml`: the scenario the README's commands run")
	}
	first, err := os.ReadFile(filepath.Join(root, "docs", "first-hour.md"))
	if err != nil {
		t.Fatal(err)
	}
	service, ok := yamlAfter(string(first), "`load/service.yaml`")
	if !ok {
		t.Fatal("docs/first-hour.md has no ```yaml block after `load/service.yaml`: the scenario its commands run")
	}
	files := map[string]string{"load/api.yaml": api, "load/service.yaml": service}
	for name, from := range map[string]string{"compose.yaml": "compose.yaml", "load.yaml": "scenario.yaml"} {
		b, err := os.ReadFile(filepath.Join(demo, from))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(w, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// yamlAfter is the body of the first ```yaml block after the line holding mark.
func yamlAfter(doc, mark string) (string, bool) {
	i := strings.Index(doc, mark)
	if i < 0 {
		return "", false
	}
	rest := doc[i:]
	j := strings.Index(rest, "\n```yaml\n")
	if j < 0 {
		return "", false
	}
	body := rest[j+len("\n```yaml\n"):]
	k := strings.Index(body, "\n```")
	if k < 0 {
		return "", false
	}
	return body[:k+1], true
}

// shellWords splits a command line as sh would, for what the docs use:
// quotes, backslashes, $NAME, ${NAME}, ${NAME:-default} and $! (through
// lookup), a comment; it ends at an unquoted ; & | < or >. Anything else
// (command substitution, an unknown variable) is an error.
func shellWords(line string, lookup func(string) (string, bool)) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	rs := []rune(line)
	expand := func(i int) (string, int, error) { // rs[i] == '$'
		if i+1 >= len(rs) {
			return "$", i + 1, nil
		}
		switch c := rs[i+1]; {
		case c == '!':
			v, _ := lookup("!")
			return v, i + 2, nil
		case c == '(':
			return "", 0, fmt.Errorf("command substitution $(…)")
		case c == '{':
			end := slices.Index(rs[i:], '}')
			if end < 0 {
				return "", 0, fmt.Errorf("unterminated ${")
			}
			inner := string(rs[i+2 : i+end])
			name, def, hasDef := strings.Cut(inner, ":-")
			if v, ok := lookup(name); ok && v != "" {
				return v, i + end + 1, nil
			}
			if hasDef {
				return def, i + end + 1, nil
			}
			return "", 0, fmt.Errorf("variable %s: the test does not know what the doc means by it (docVars)", name)
		default:
			j := i + 1
			for j < len(rs) && (rs[j] == '_' || rs[j] >= 'a' && rs[j] <= 'z' || rs[j] >= 'A' && rs[j] <= 'Z' || rs[j] >= '0' && rs[j] <= '9') {
				j++
			}
			if j == i+1 {
				return "$", i + 1, nil
			}
			if v, ok := lookup(string(rs[i+1 : j])); ok {
				return v, j, nil
			}
			return "", 0, fmt.Errorf("variable %s: the test does not know what the doc means by it (docVars)", string(rs[i+1:j]))
		}
	}
	for i := 0; i < len(rs); {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
			i++
			continue
		case c == '#' && !inWord:
			i = len(rs)
			continue
		case strings.ContainsRune(";&|<>", c):
			i = len(rs)
			continue
		case c == '`':
			return nil, fmt.Errorf("command substitution `…`")
		case c == '\\' && i+1 < len(rs):
			cur.WriteRune(rs[i+1])
			i += 2
		case c == '\'':
			end := slices.Index(rs[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated '")
			}
			cur.WriteString(string(rs[i+1 : i+1+end]))
			i += end + 2
		case c == '"':
			i++
			for ; i < len(rs) && rs[i] != '"'; i++ {
				switch {
				case rs[i] == '\\' && i+1 < len(rs) && strings.ContainsRune(`$"\`+"`", rs[i+1]):
					cur.WriteRune(rs[i+1])
					i++
				case rs[i] == '$':
					v, next, err := expand(i)
					if err != nil {
						return nil, err
					}
					cur.WriteString(v)
					i = next - 1
				case rs[i] == '`':
					return nil, fmt.Errorf("command substitution `…`")
				default:
					cur.WriteRune(rs[i])
				}
			}
			if i >= len(rs) {
				return nil, fmt.Errorf("unterminated \"")
			}
			i++
		case c == '$':
			v, next, err := expand(i)
			if err != nil {
				return nil, err
			}
			cur.WriteString(v)
			i = next
		default:
			cur.WriteRune(c)
			i++
		}
		inWord = true
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("no command")
	}
	return words, nil
}

func TestShellWords(t *testing.T) {
	vars := func(n string) (string, bool) {
		if n == "X" {
			return "x", true
		}
		return "", false
	}
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`loadgate run --scenario a.yaml   # a comment`, []string{"loadgate", "run", "--scenario", "a.yaml"}},
		{`loadgate gate --base "${base:-HEAD~1}" --head 'H E' a\ b`, []string{"loadgate", "gate", "--base", "HEAD~1", "--head", "H E", "a b"}},
		{`loadgate x --v "$X" $X#y > out.txt`, []string{"loadgate", "x", "--v", "x", "x#y"}},
	} {
		got, err := shellWords(c.in, vars)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"loadgate $(pwd)", "loadgate $Y", `loadgate "open`, "loadgate `x`"} {
		if _, err := shellWords(bad, vars); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
