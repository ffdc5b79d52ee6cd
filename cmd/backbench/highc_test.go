package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
)

// fileLimitEnv is the environment variable that makes the test binary,
// started again by TestFileLimitRefused, its child
// (TestFileLimitRefusedChild). The run of 20000 connections on each engine
// is internal/execute's TestHighConcurrency.
const fileLimitEnv = "BACKBENCH_TEST_FILE_LIMIT"

// TestFileLimitRefused: a concurrency whose connections the file limit
// cannot hold, raised to its hard limit, is refused with one line and exit
// 2 before any dial, by bench (-c), sweep (its highest level) and capacity
// (--max in the closed model, the -c ceiling in the open one), while the
// highest one that fits runs, on each engine, with every request complete:
// a worker holds one descriptor, its connection (the io_uring engine, whose
// closes wait in the ring for the next submission, submits them when a
// socket meets the limit). The limit is lowered in a child process (the
// test binary again, in TestFileLimitRefusedChild), hard limit included:
// the runtime raises the soft limit to the hard one at start, as backbench
// does. The backend stays here, with its own descriptors, and counts every
// connection the child made: only those of the runs that fit.
func TestFileLimitRefused(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	cmd := exec.Command(os.Args[0], "-test.run=^TestFileLimitRefusedChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fileLimitEnv+"="+srv.URL("/"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestFileLimitRefusedChild") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var sent int64
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "sent "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			sent += n
		}
	}
	if a := srv.Accepted(); sent == 0 || a != sent {
		t.Errorf("the server accepted %d connections, the runs that fit made %d: the refused ones dialed", a, sent)
	}
}

// fileLimitChild is the file limit TestFileLimitRefusedChild runs under.
const fileLimitChild = 200

// TestFileLimitRefusedChild is the child of TestFileLimitRefused. Run
// alone, it skips.
func TestFileLimitRefusedChild(t *testing.T) {
	url := os.Getenv(fileLimitEnv)
	if url == "" {
		t.Skip("the child process of TestFileLimitRefused; runs only as its child")
	}
	lim := syscall.Rlimit{Cur: fileLimitChild, Max: fileLimitChild}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	most := execute.MaxConcurrency()
	if want := fileLimitChild - int(execute.FilesNeeded(0)); most != want {
		t.Errorf("MaxConcurrency = %d under a limit of %d, want %d", most, fileLimitChild, want)
	}
	over := strconv.Itoa(most + 1)
	for _, args := range [][]string{
		{"bench", "-n", over, "-c", over},
		{"bench", "-c", "1000000", "-t", "5"},
		{"sweep", "-c", "1," + over, "-n", over},
		{"capacity", "--model", "closed", "--max", over, "--slo", "p99<=50ms", "-t", "1"},
		{"capacity", "-c", over, "--slo", "p99<=50ms", "-t", "1"},
	} {
		code, stdout, stderr := runMain(t, context.Background(), append(args, url)...)
		msg := strings.TrimSpace(stderr)
		if code != exitUsage || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "open files") ||
			!strings.Contains(msg, "at most "+strconv.Itoa(most)) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q: want exit 2 and one line", args, code, stderr, stdout)
		}
	}
	// The highest concurrency that fits, each worker redialing for every
	// request.
	n := 4 * most
	for _, engine := range engines(t) {
		s := benchJSON(t, "--engine", engine, "-n", strconv.Itoa(n), "-c", strconv.Itoa(most), "-s", "10", url)
		if s.Complete != int64(n) {
			t.Errorf("%s -c %d under a limit of %d: complete %d, failed %d %v", engine, most, fileLimitChild, s.Complete, s.Failed, s.ErrorSamples)
		}
		fmt.Printf("sent %d\n", s.Complete+s.Failed)
	}
}
