package main

import (
	"os"
	"testing"
)

// onceAcrossEngines skips a test in make test's second pass, which runs
// this package again with BACKBENCH_ENGINE forced for the load path. A test
// needs one pass when it tests what is made of the runs (verdicts, gates,
// searches, tables, pairs, pages, saved files), when its runs never reach
// the engine choice (FastCGI and keep-alive run on the poller in both
// passes), or when it runs no load at all (docs, help, completion, the
// build): the second pass would repeat it exactly.
func onceAcrossEngines(t *testing.T) {
	t.Helper()
	if os.Getenv("BACKBENCH_ENGINE") != "" {
		t.Skip("runs once, with the default engine: it tests what is made of the runs, not the load path")
	}
}
