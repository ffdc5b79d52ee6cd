package main

import (
	"context"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/sockets"
)

// engines returns the engines to test explicitly: poller, and uring where
// io_uring can be set up.
func engines(t *testing.T) []string {
	if err := sockets.RingAvailable(); err != nil {
		t.Logf("uring not tested: %v", err)
		return []string{"poller"}
	}
	return []string{"poller", "uring"}
}

// The engines' runs (counts, classes, time limit, cancel, TIME_WAIT, GC)
// are tested in internal/execute (engine_run_test.go); engines serves
// the file-limit tests of highc_test.go here.

// TestEngineFlag: a bad --engine is a usage error; uring where it cannot
// run (open model, TLS, clusters) too.
func TestEngineFlag(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--engine", "epoll"}, "want one of auto, poller, uring"},
		{[]string{"--engine", "uring", "--rate", "100"}, "closed model only"},
	} {
		code, _, errs := runMain(t, context.Background(), append(append([]string{"bench", "-n", "10"}, c.args...), srv.URL("/"))...)
		if code != exitUsage || !strings.Contains(errs, c.msg) || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("%v: exit %d, %q", c.args, code, errs)
		}
	}
}
