package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayoutPath checks the paths that docs/architecture.md's Layout
// section draws, a reader's way from flags to report: every file on them
// exists and declares the functions (or methods) its line names before
// the colon, so that the drawing follows the code when code moves; and
// the paths stay short: at most 15 files for a bench run, at most 5 more
// each for a sweep and a capacity search.
func TestLayoutPath(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	i, j := strings.Index(s, "\n## Layout\n"), strings.Index(s, "\n| path | what |")
	if i < 0 || j < i {
		t.Fatal("docs/architecture.md: no Layout section with its package table")
	}
	// The text blocks between the heading and the package table: bench's
	// path, then what a sweep adds, then what a capacity search adds.
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
	for k, limit := range []int{15, 5, 5} {
		name := []string{"bench", "sweep", "capacity"}[k]
		if n := len(blocks[k]); n > limit || n == 0 {
			t.Errorf("the %s path has %d files, want 1 to %d", name, n, limit)
		}
		for _, line := range blocks[k] {
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
