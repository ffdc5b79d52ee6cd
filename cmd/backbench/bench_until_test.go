package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchUntilErrors: bench's --until decided and its flags, given where
// they cannot apply, are usage errors (exit 2) said before any
// connection: without --against, --budget or --max-repeat without
// --until, and a saved run of one run (no trials) that the rule can
// never decide against. (The trials until decided against a saved run:
// internal/compare's TestLiveBenchUntilDecided.)
func TestBenchUntilErrors(t *testing.T) {
	dir := t.TempDir()
	url := "http://unix:" + filepath.Join(dir, "none.sock") + ":/"
	one, err := filepath.Abs("../../internal/document/testdata/schema1/bench.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--until", "decided"}, "--until decided decides the comparison with a saved run: give the run with --against FILE (or stop on the interval's width with --precision P)"},
		{[]string{"--repeat", "5", "--until", "decided"}, "give the run with --against FILE"},
		{[]string{"--budget", "1m"}, "--budget needs --until decided"},
		{[]string{"--repeat", "5", "--budget", "1m"}, "--budget needs --until decided"},
		{[]string{"--max-repeat", "9"}, "--max-repeat needs --precision P or --until decided"},
		{[]string{"--until", "decided", "--repeat", "2", "--against", one}, "want at least 4 first rounds"},
		{[]string{"--until", "decided", "--against", one}, "too few for the sequential rule to decide against within --max-repeat 20"},
	} {
		code, out, errs := runMain(t, context.Background(), append([]string{"bench", "-q", "-n", "5"}, append(c.args, url)...)...)
		if b := out + errs; code != exitUsage || !strings.Contains(b, c.want) || strings.Count(strings.TrimSpace(b), "\n") != 0 {
			t.Errorf("bench %v: exit %d, %s: want exit 2 and one line with %q", c.args, code, b, c.want)
		}
	}
}
