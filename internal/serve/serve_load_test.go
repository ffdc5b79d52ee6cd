package serve_test

// Runs against `backbench serve`'s backends as serve.Run starts them,
// with the load built by internal/plan and run by internal/execute
// (packages above this one, to drive it as bench does).

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/serve"
	"github.com/backbench/backbench/internal/stats"
)

// serveLoadOptions are serve's flag defaults on one Unix socket.
func serveLoadOptions(sock string) serve.Options {
	return serve.Options{Protocol: fixtures.ProtoHTTP, Listens: []string{"unix:" + sock}, Model: "threaded", Status: 200,
		KeepAlive: "on", FaultEvery: 1, Processes: 1}
}

// serveLoadStart runs serve.Run with o in a goroutine and waits until
// its socket sock listens; the channel gets Run's error.
func serveLoadStart(t *testing.T, ctx context.Context, o serve.Options, sock string) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- serve.Run(ctx, o, io.Discard) }()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if fi, err := os.Stat(sock); err == nil && fi.Mode().Type() == os.ModeSocket {
			return done
		}
		if time.Now().After(deadline) {
			t.Fatal("serve did not listen")
		}
	}
}

// serveLoadRun runs -n n (and -k) on url and returns the summary.
func serveLoadRun(t *testing.T, url string, n int64, keepAlive bool) stats.Summary {
	t.Helper()
	po := plan.Defaults(url)
	po.Requests, po.RequestsSet, po.KeepAlive = n, true, keepAlive
	ld, err := po.Build()
	if err != nil {
		t.Fatal(err)
	}
	run, err := execute.Run(context.Background(), ld.Plan, execute.Options{Stderr: io.Discard, Quiet: true, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return run.Summary
}

// TestServeExitAfter: serve --exit-after 3 answers 3 requests and ends
// with one error line saying so; the run reports the loss.
func TestServeExitAfter(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := serveLoadOptions(sock)
	o.Protocol, o.Behaviour.ExitAfter = fixtures.ProtoFCGI, 3
	done := serveLoadStart(t, ctx, o, sock)
	s := serveLoadRun(t, "fcgi://unix:"+sock+":/x", 6, false)
	if s.Complete != 3 || s.BackendLost == nil || s.BackendLost.AfterRequests != 3 {
		t.Errorf("complete %d, lost %+v", s.Complete, s.BackendLost)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "exited after 3 requests") ||
		strings.Count(strings.TrimSpace(err.Error()), "\n") != 0 {
		t.Errorf("serve: %v", err)
	}
}

// TestServeFault: serve --fault bad-status --fault-every 2 applies the
// fault to every second request, and ends without an error when stopped.
func TestServeFault(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ctx, cancel := context.WithCancel(context.Background())
	o := serveLoadOptions(sock)
	o.Fault, o.FaultEvery = fixtures.FaultBadStatus, 2
	done := serveLoadStart(t, ctx, o, sock)
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	s := serveLoadRun(t, "http://unix:"+sock+":/", 10, true)
	if s.Complete != 5 || s.Failures.Protocol != 5 || s.Failed != 5 {
		t.Errorf("complete %d, failures %+v: want 5 and 5 protocol", s.Complete, s.Failures)
	}
}
