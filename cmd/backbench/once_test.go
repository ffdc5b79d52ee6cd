package main

import (
	"os"
	"testing"
)

// onceAcrossEngines skips a test in make test's second pass, which runs
// this package again with BACKBENCH_ENGINE forced for the load path: a
// test of what is made of the runs (verdicts, gates, tables, pairs) needs
// one pass.
func onceAcrossEngines(t *testing.T) {
	t.Helper()
	if os.Getenv("BACKBENCH_ENGINE") != "" {
		t.Skip("runs once, with the default engine: it tests what is made of the runs, not the load path")
	}
}
