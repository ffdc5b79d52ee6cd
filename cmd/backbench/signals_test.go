package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
)

// buildBinary is the command built once for the package (sharedBinary).
func buildBinary(t *testing.T) string {
	t.Helper()
	return sharedBinary(t)
}

// waitFor polls cond every 10 ms for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// waiter holds the Wait of each started command, so that exitCode can be
// called more than once on one command.
type waiter struct {
	done chan struct{}
	err  error
}

// exitCode waits for cmd for up to d and returns its exit status, or -1
// when it did not end in time (then it is killed when the test ends).
func exitCode(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	w, ok := waiting[cmd]
	if !ok {
		w = &waiter{done: make(chan struct{})}
		waiting[cmd] = w
		go func() { w.err = cmd.Wait(); close(w.done) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-w.done; delete(waiting, cmd) })
	}
	select {
	case <-w.done:
		var ee *exec.ExitError
		if errors.As(w.err, &ee) {
			return ee.ExitCode()
		}
		if w.err != nil {
			t.Fatal(w.err)
		}
		return 0
	case <-time.After(d):
		return -1
	}
}

// waiting maps a started command to its waiter; used by one test at a time.
var waiting = map[*exec.Cmd]*waiter{}

// TestSignals runs the built binary against a slow built-in backend and
// interrupts it: SIGINT and SIGTERM print the report of what completed,
// marked interrupted, and exit 130 and 143; a second SIGINT ends a run
// that is stuck (here: on a stderr nobody reads) at once.
func TestSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, exitSIGINT}, {syscall.SIGTERM, exitSIGTERM}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 20 * time.Millisecond})
			cmd := exec.Command(bin, "bench", "-q", "-n", "100000", "-c", "2", "-k", srv.URL("/"))
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if !waitFor(10*time.Second, func() bool { return srv.Requests() >= 6 }) {
				cmd.Process.Kill()
				t.Fatalf("the run did not start: %s", errb.String())
			}
			cmd.Process.Signal(c.sig)
			if code := exitCode(t, cmd, 10*time.Second); code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errb.String())
			}
			for _, want := range []string{"Complete requests:", "Interrupted:", "Failed requests:        0\n"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("report lacks %q:\n%s", want, out.String())
				}
			}
			if strings.Contains(errb.String(), "goroutine") || strings.Contains(errb.String(), "panic") {
				t.Errorf("stack trace: %s", errb.String())
			}
		})
	}
	t.Run("second SIGINT", func(t *testing.T) {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
		// -v 2 writes every head on stderr; nobody reads it, so the
		// workers block once the pipe is full and the first SIGINT
		// cannot end the run.
		cmd := exec.Command(bin, "bench", "-q", "-v", "2", "-n", "1000000", "-c", "2", "-k", srv.URL("/"))
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		cmd.Stderr = pw
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		stalled := waitFor(10*time.Second, func() bool {
			n := srv.Requests()
			time.Sleep(200 * time.Millisecond)
			return n > 0 && srv.Requests() == n
		})
		if !stalled {
			cmd.Process.Kill()
			t.Fatal("the run did not stall on its stderr")
		}
		cmd.Process.Signal(syscall.SIGINT)
		if code := exitCode(t, cmd, 300*time.Millisecond); code != -1 {
			t.Fatalf("exit %d after the first SIGINT: the run was not stuck, the test proves nothing", code)
		}
		cmd.Process.Signal(syscall.SIGINT)
		if code := exitCode(t, cmd, 5*time.Second); code != exitSIGINT {
			t.Fatalf("exit %d after the second SIGINT, want %d", code, exitSIGINT)
		}
	})
}

// TestNoLeaks runs bench through Main in-process, to the end or
// interrupted, against healthy and faulty backends: afterwards no goroutine
// remains beyond those that were there before, and the backend holds no
// open connection.
func TestNoLeaks(t *testing.T) {
	cases := []struct {
		name   string
		proto  string
		opts   fixtures.Options
		args   []string
		cancel time.Duration // interrupt after this long; 0: never
		code   int
	}{
		{"http keep-alive", fixtures.ProtoHTTP, fixtures.Options{}, []string{"-n", "300", "-c", "8", "-k"}, 0, 0},
		{"http close", fixtures.ProtoHTTP, fixtures.Options{}, []string{"-n", "300", "-c", "8"}, 0, 0},
		{"fcgi keep-alive", fixtures.ProtoFCGI, fixtures.Options{}, []string{"-n", "300", "-c", "8", "-k"}, 0, 0},
		{"fcgi hang", fixtures.ProtoFCGI, fixtures.Options{Fault: fixtures.FaultHang}, []string{"-n", "8", "-c", "4", "-k", "-s", "0.2"}, 0, 0},
		{"http cut", fixtures.ProtoHTTP, fixtures.Options{Fault: fixtures.FaultChunkedCut}, []string{"-n", "20", "-c", "4", "-k"}, 0, 0},
		{"http interrupted", fixtures.ProtoHTTP, fixtures.Options{Delay: 10 * time.Millisecond}, []string{"-n", "100000", "-c", "8", "-k"}, 200 * time.Millisecond, exitSIGINT},
		{"fcgi interrupted in hang", fixtures.ProtoFCGI, fixtures.Options{Fault: fixtures.FaultHang}, []string{"-n", "100", "-c", "4", "-k", "-s", "30"}, 200 * time.Millisecond, exitSIGINT},
	}
	for _, c := range cases {
		for _, network := range []string{"tcp", "unix"} {
			t.Run(fmt.Sprintf("%s/%s", c.name, network), func(t *testing.T) {
				srv := fixtures.StartTB(t, c.proto, network, c.opts)
				// Goroutines of earlier tests still winding down are in
				// the base and only make the check easier.
				base := runtime.NumGoroutine()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if c.cancel > 0 {
					time.AfterFunc(c.cancel, cancel)
				}
				start := time.Now()
				args := append(append([]string{"bench", "-q"}, c.args...), srv.URL("/"))
				code := Main(ctx, nil, args, io.Discard, io.Discard)
				if code != c.code {
					t.Fatalf("exit %d, want %d", code, c.code)
				}
				// Loose for a busy machine: an ignored cancel would run to
				// the end of the run's own limits, much later.
				if c.cancel > 0 && time.Since(start) > c.cancel+8*time.Second {
					t.Errorf("the interrupted run took %v", time.Since(start))
				}
				if !waitFor(3*time.Second, func() bool { return runtime.NumGoroutine() <= base }) {
					buf := make([]byte, 1<<20)
					t.Errorf("%d goroutines after the run, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
				}
				if !waitFor(3*time.Second, func() bool { return srv.OpenConns() == 0 }) {
					t.Errorf("%d connections still open on the backend", srv.OpenConns())
				}
			})
		}
	}
}
