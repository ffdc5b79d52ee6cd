package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// layoutBlocks returns the text blocks of docs/architecture.md's Layout
// section, between its heading and its package table, one slice of
// non-empty lines each: a bench run's files, then what a sweep adds, then
// what a capacity search adds.
func layoutBlocks(t *testing.T, root string) [][]string {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	i, j := strings.Index(s, "\n## Layout\n"), strings.Index(s, "\n| path | what |")
	if i < 0 || j < i {
		t.Fatal("docs/architecture.md: no Layout section with its package table")
	}
	var blocks [][]string
	in := false
	for _, line := range strings.Split(s[i:j], "\n") {
		switch {
		case strings.HasPrefix(line, "```text"):
			in = true
			blocks = append(blocks, nil)
		case strings.HasPrefix(line, "```"):
			in = false
		case in && strings.TrimSpace(line) != "":
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], line)
		}
	}
	if len(blocks) != 3 {
		t.Fatalf("Layout draws %d paths, want 3 (bench, sweep, capacity)", len(blocks))
	}
	return blocks
}

// TestLayoutPath checks the lines of docs/architecture.md's Layout
// section: every file of a bench run's list exists and is said what it is
// for ("FILE  what"); the sweep's and the capacity search's additions
// (at most 5 files each) declare the functions (or methods) their lines
// name before the colon, so that the drawing follows the code when code
// moves. Which files a bench run executes is TestLayoutMeasured's.
func TestLayoutPath(t *testing.T) {
	root := filepath.Join("..", "..")
	blocks := layoutBlocks(t, root)
	for _, line := range blocks[0] {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Errorf("bench path: %q is not 'FILE  what'", line)
			continue
		}
		if _, err := os.Stat(filepath.Join(root, f[0])); err != nil {
			t.Errorf("bench path: %v", err)
		}
	}
	for k, limit := range []int{5, 5} {
		name := []string{"sweep", "capacity"}[k]
		block := blocks[k+1]
		if n := len(block); n > limit || n == 0 {
			t.Errorf("the %s path has %d files, want 1 to %d", name, n, limit)
		}
		for _, line := range block {
			f := strings.Fields(line)
			colon := strings.Index(line, ":")
			if len(f) < 2 || colon < 0 {
				t.Errorf("%s path: %q is not 'FILE FUNC, FUNC: what'", name, line)
				continue
			}
			file := f[0]
			names := strings.Split(strings.TrimSpace(line[len(file)+strings.Index(line[len(file):], f[1]):colon]), ",")
			declared := declaredFuncs(t, filepath.Join(root, file))
			for _, n := range names {
				if n = strings.TrimSpace(n); !declared[n] {
					t.Errorf("%s path: %s declares no function or method %q", name, file, n)
				}
			}
		}
	}
}

// TestLayoutMeasured measures the bench path that docs/architecture.md's
// Layout section lists: it builds the binary with coverage of every
// package of the module, starts a built-in HTTP backend on a Unix socket
// (its own process, not measured), runs `bench -q -k -n 300 -c 2` against
// it with GOCOVERDIR set, and fails when the files whose statements ran
// differ from the section's first list, or their count and their
// packages' from the section's "That is N files in M packages". The
// backend is ready when it prints its "listening" line and is stopped by
// its PID.
func TestLayoutMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary with -cover and runs a bench")
	}
	onceAcrossEngines(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, cov := filepath.Join(dir, "backbench"), filepath.Join(dir, "cov")
	if err := os.Mkdir(cov, 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-cover", "-coverpkg=./...", "-o", bin, "./cmd/backbench")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -cover: %v\n%s", err, out)
	}
	// The environment without this process's own coverage directory or
	// backbench settings (BACKBENCH_ENGINE would pick other files).
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOCOVERDIR=") && !strings.HasPrefix(kv, "BACKBENCH_") {
			env = append(env, kv)
		}
	}
	sock := filepath.Join(dir, "s.sock")
	serve := exec.Command(bin, "serve", "--listen", "unix:"+sock)
	serve.Env = env
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = serve.Process.Kill() // by its PID; a no-op once it has been waited for
		_ = serve.Wait()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "listening ") {
		t.Fatalf("serve: %q, %v", line, err)
	}
	bench := exec.Command(bin, "bench", "-q", "-k", "-n", "300", "-c", "2", "http://unix:"+sock+":/x")
	bench.Env = append(env, "GOCOVERDIR="+cov)
	if b, err := bench.CombinedOutput(); err != nil {
		t.Fatalf("bench: %v\n%s", err, b)
	}
	funcs := exec.Command("go", "tool", "covdata", "func", "-i", cov)
	funcs.Dir = root
	b, err := funcs.Output()
	if err != nil {
		t.Fatalf("go tool covdata func: %v", err)
	}
	mod := "github.com/backbench/backbench/"
	ran := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		// "MODULE/PATH/FILE.go:LINE:  FUNC  PERCENT%"
		f := strings.Fields(line)
		if len(f) < 3 || !strings.HasPrefix(f[0], mod) || f[len(f)-1] == "0.0%" {
			continue
		}
		file, _, _ := strings.Cut(strings.TrimPrefix(f[0], mod), ":")
		ran[file] = true
	}
	listed := map[string]bool{}
	for _, line := range layoutBlocks(t, root)[0] {
		listed[strings.Fields(line)[0]] = true
	}
	var missing, extra []string
	for f := range ran {
		if !listed[f] {
			missing = append(missing, f)
		}
	}
	for f := range listed {
		if !ran[f] {
			extra = append(extra, f)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	pkgs := map[string]bool{}
	for f := range ran {
		pkgs[filepath.Dir(f)] = true
	}
	t.Logf("a bench -k run executes %d files in %d packages", len(ran), len(pkgs))
	if got, want := layoutCount(t, root), fmt.Sprintf("That is %d files in %d packages", len(ran), len(pkgs)); got != want {
		t.Errorf("docs/architecture.md's Layout says %q; the run measured: %q", got, want)
	}
	if len(missing) > 0 {
		t.Errorf("files that a bench -k run executes and docs/architecture.md's Layout does not list:\n%s", strings.Join(missing, "\n"))
	}
	if len(extra) > 0 {
		t.Errorf("files that docs/architecture.md's Layout lists and a bench -k run does not execute:\n%s", strings.Join(extra, "\n"))
	}
}

// layoutCount returns the sentence of docs/architecture.md's Layout that
// counts the bench path's files and packages ("That is N files in M
// packages"), or "" when there is none.
func layoutCount(t *testing.T, root string) string {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(`That is \d+ files in \d+ packages`).FindString(string(page))
}

// declaredFuncs returns the names of the functions and methods declared
// in the Go file at path.
func declaredFuncs(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string]bool{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			out[fd.Name.Name] = true
		}
	}
	return out
}
