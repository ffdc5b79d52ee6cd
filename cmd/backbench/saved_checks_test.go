package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
)

// mutate writes a copy of the file src at dir/name with every match of re
// replaced by repl, and fails when nothing matched.
func mutate(t *testing.T, src, dir, name, re, repl string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	rx := regexp.MustCompile(re)
	if !rx.Match(b) {
		t.Fatalf("%s: no %s", src, re)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, rx.ReplaceAll(b, []byte(repl)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// oneLineExit2 fails unless the command exited 2 with one line on stderr
// holding every want, and nothing on stdout.
func oneLineExit2(t *testing.T, what string, code int, out, errs string, want ...string) {
	t.Helper()
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
		t.Errorf("%s: exit %d, stdout %.200q, stderr %q; want 2 and one line", what, code, out, errs)
		return
	}
	for _, w := range want {
		if !strings.Contains(errs, w) {
			t.Errorf("%s: stderr %q does not name %q", what, errs, w)
		}
	}
}

// TestSavedNumbersExit: merge, compare and report refuse a saved result
// whose numbers or schema are not a result's with exit status 2 and one
// line naming the file and the field, nothing on stdout. (Every check of
// each reader: internal/merge's TestSavedNumbersMerge and
// TestMergeSameRunTwice, internal/compare's TestSavedNumbersCompare,
// internal/report/page's TestPageFiniteCoordinates.)
func TestSavedNumbersExit(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	a := benchFile(t, dir, "a.json", "-n", "20", "-c", "2", srv.URL("/"))
	neg := mutate(t, a, dir, "neg-complete.json", `("counts": \{\s*"complete": *)[0-9]+`, `${1}-5`)
	code, out, errs := runMain(t, context.Background(), "merge", a, neg)
	oneLineExit2(t, "merge: negative count", code, out, errs, "neg-complete.json", "counts.complete is -5")
	code, out, errs = runMain(t, context.Background(), "compare", a, neg)
	oneLineExit2(t, "compare: negative count", code, out, errs, "neg-complete.json", "counts.complete is -5")
	bad := mutate(t, a, dir, "schema.json", `"schema": *1`, `"schema": 2`)
	code, out, errs = runMain(t, context.Background(), "report", "-o", filepath.Join(dir, "r.html"), bad)
	oneLineExit2(t, "report: schema 2", code, out, errs, "schema.json", "schema")
}
