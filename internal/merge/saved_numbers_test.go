package merge_test

// Saved runs of a live in-process backend, made as bench makes them
// (plan.Options.Build, execute.Run: imported only to build the input),
// then mutated, as merge reads them.

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/merge"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
)

// savedRunFile runs a bench of 50 requests, 2 at a time, against url and
// saves its result as dir/name (bench --format json).
func savedRunFile(t *testing.T, dir, name, url string) string {
	t.Helper()
	o := plan.Defaults(url)
	o.Requests, o.RequestsSet, o.Concurrency = 50, true, 2
	l, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	run, err := execute.Run(context.Background(), l.Plan, execute.Options{Stderr: io.Discard, Quiet: true, Observe: true, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := document.Write(&b, &document.Run{Summary: &run.Summary, Record: run.Record}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// savedMutate writes a copy of the file src at dir/name with every match
// of re replaced by repl, and fails when nothing matched.
func savedMutate(t *testing.T, src, dir, name, re, repl string) string {
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

// savedMerge merges the files names as the merge command does ("-" is
// stdin) and returns the merged run's text, or the error.
func savedMerge(t *testing.T, stdin io.Reader, names ...string) (string, error) {
	t.Helper()
	m := merge.New(merge.Options{})
	for _, n := range names {
		if err := m.ReadFile(n, stdin); err != nil {
			return "", err
		}
	}
	d, err := m.Result()
	if err != nil {
		return "", err
	}
	run := d.(*document.MergedRun)
	var b bytes.Buffer
	if err := report.MergeText(&b, run.Summary, run.Generators, run.Info, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.String(), nil
}

// savedRefused fails unless err is one line holding every want.
func savedRefused(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: %v; want one line", what, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not name %q", what, err, w)
		}
	}
}

// TestSavedNumbersMerge feeds merge mutated copies of a live run's result:
// negative counts and sums, failures near MaxInt64 in two files (whose sum
// would wrap), and schemas that are no schema. Each is refused with one
// line naming the file and the field; each huge file alone is a valid
// count. (compare's and report's: internal/compare's
// TestSavedNumbersCompare and internal/report/page's
// TestPageFiniteCoordinates; the exit status 2: cmd/backbench.)
func TestSavedNumbersMerge(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	a := savedRunFile(t, dir, "a.json", srv.URL("/"))
	b := savedRunFile(t, dir, "b.json", srv.URL("/"))
	// The run's counts, not the timeline's windows (which have a
	// "complete" each, checked when the timeline is read).
	negComplete := savedMutate(t, a, dir, "neg-complete.json", `("counts": \{\s*"complete": *)[0-9]+`, `${1}-5`)
	negSum := savedMutate(t, a, dir, "neg-sum.json", `("total": \{\s*"count": [0-9]+,\s*"sum_ns": )[0-9]+`, `${1}-2500000000`)
	hugeA := savedMutate(t, a, dir, "huge-a.json", `"connect": *0,`, `"connect": 9223372036854775000,`)
	hugeB := savedMutate(t, b, dir, "huge-b.json", `"connect": *0,`, `"connect": 9223372036854775000,`)
	for _, tc := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"negative count", []string{a, negComplete}, []string{"neg-complete.json", "counts.complete is -5"}},
		{"negative sum", []string{a, negSum}, []string{"neg-sum.json", "phases.total.sum_ns is -2500000000"}},
		{"failures that overflow", []string{hugeA, hugeB}, []string{"huge-b.json", "counts.failures", "overflows"}},
	} {
		_, err := savedMerge(t, nil, tc.files...)
		savedRefused(t, "merge: "+tc.name, err, tc.want...)
	}
	if out, err := savedMerge(t, nil, hugeA); err != nil || !strings.Contains(out, "Failed requests:        9223372036854775000\n") {
		t.Errorf("merge of one file of 9223372036854775000 failures: %v\n%s", err, out)
	}
	for i, schema := range []string{"2", "-1", "0", `"1"`, "1e308", "1.5"} {
		bad := savedMutate(t, a, dir, "schema"+strconv.Itoa(i)+".json", `"schema": *1`, `"schema": `+schema)
		_, err := savedMerge(t, nil, a, bad)
		savedRefused(t, "merge: schema "+schema, err, filepath.Base(bad), "schema")
	}
}

// TestMergeSameRunTwice gives merge one run twice by another path: a
// symlink, a copy, a re-indented copy and standard input. Each is refused
// with one line naming both, since its requests would count twice; two
// runs merge.
func TestMergeSameRunTwice(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	dir := t.TempDir()
	a := savedRunFile(t, dir, "a.json", srv.URL("/"))
	b := savedRunFile(t, dir, "b.json", srv.URL("/"))
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(a)
	cp := filepath.Join(dir, "copy.json")
	os.WriteFile(cp, data, 0o644)
	flat := filepath.Join(dir, "flat.json")
	os.WriteFile(flat, regexp.MustCompile(`\n\s*`).ReplaceAll(data, nil), 0o644)
	for _, other := range []string{link, cp, flat} {
		_, err := savedMerge(t, nil, a, b, other)
		savedRefused(t, "merge a b "+filepath.Base(other), err, "a.json", filepath.Base(other), "twice")
	}
	// Standard input.
	f, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = savedMerge(t, f, b, "-", a)
	savedRefused(t, "merge b - a", err, "twice")
	// Two runs merge.
	if out, err := savedMerge(t, nil, a, b); err != nil || !strings.Contains(out, "Complete requests:      100\n") {
		t.Errorf("merge a b: %v\n%s", err, out)
	}
}
