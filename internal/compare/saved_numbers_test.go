package compare_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/compare"
)

// liveMutate writes a copy of the file src at dir/name with every match
// of re replaced by repl, and fails when nothing matched.
func liveMutate(t *testing.T, src, dir, name, re, repl string) string {
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

// TestSavedNumbersCompare feeds compare (Load) mutated copies of a live
// run's result: negative counts and sums in the summary and in the
// record, and schemas that are no schema. Each is refused with one line
// naming the file and the field. (merge's: internal/merge's
// TestSavedNumbersMerge; the exit status 2: cmd/backbench.)
func TestSavedNumbersCompare(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	o := liveBench(srv.URL("/"), 50, nil)
	o.Concurrency = 2
	a := liveBenchFile(t, dir, "a.json", o, 0, "")
	negComplete := liveMutate(t, a, dir, "neg-complete.json", `("counts": \{\s*"complete": *)[0-9]+`, `${1}-5`)
	negSum := liveMutate(t, a, dir, "neg-sum.json", `("total": \{\s*"count": [0-9]+,\s*"sum_ns": )[0-9]+`, `${1}-2500000000`)
	negSummary := liveMutate(t, a, dir, "neg-summary.json", `"complete_requests": *[0-9]+`, `"complete_requests": -5`)
	check := func(what, file string, want ...string) {
		t.Helper()
		_, err := compare.Load(file)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("compare: %s: %v; want one line", what, err)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("compare: %s: %q does not name %q", what, err, w)
			}
		}
	}
	if _, err := compare.Load(a); err != nil {
		t.Fatalf("the run itself: %v", err)
	}
	check("negative summary count", negSummary, "neg-summary.json", "complete_requests is -5")
	check("negative record count", negComplete, "neg-complete.json", "counts.complete is -5")
	check("negative record sum", negSum, "neg-sum.json", "sum_ns is -2500000000")
	for i, schema := range []string{"2", "-1", "0", `"1"`, "1e308", "1.5"} {
		bad := liveMutate(t, a, dir, "schema"+strconv.Itoa(i)+".json", `"schema": *1`, `"schema": `+schema)
		check("schema "+schema, bad, filepath.Base(bad), "schema")
	}
}
