package compare_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
)

// The test binary is also a backend process: with liveServeDelayEnv set,
// TestMain serves the built-in HTTP backend answering after that delay
// on the Unix socket liveServeSockEnv names, says "listening" on stdout
// and serves until SIGTERM, instead of running the tests.
const (
	liveServeDelayEnv = "BACKBENCH_COMPARE_TEST_SERVE_DELAY"
	liveServeSockEnv  = "BACKBENCH_COMPARE_TEST_SERVE_SOCK"
	// liveServePathsEnv holds the paths' own delays, PATH=DELAY
	// comma-separated (fixtures.Options.PathDelays).
	liveServePathsEnv = "BACKBENCH_COMPARE_TEST_SERVE_PATHS"
)

// TestMain runs the tests, or a backend process (liveServeProcess).
func TestMain(m *testing.M) {
	if d := os.Getenv(liveServeDelayEnv); d != "" {
		os.Exit(liveServeMain(d, os.Getenv(liveServeSockEnv), os.Getenv(liveServePathsEnv)))
	}
	os.Exit(m.Run())
}

// liveServeMain is the backend process: the built-in HTTP backend on the
// Unix socket sock, answering after delay (and paths' own delays: a
// list of PATH=DELAY), until SIGTERM.
func liveServeMain(delay, sock, paths string) int {
	d, err := time.ParseDuration(delay)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	opts := fixtures.Options{Delay: d, BodyBytes: 10}
	for _, p := range strings.Split(paths, ",") {
		path, pd, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		v, err := time.ParseDuration(pd)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if opts.PathDelays == nil {
			opts.PathDelays = map[string]time.Duration{}
		}
		opts.PathDelays[path] = v
	}
	srv, err := fixtures.Start(fixtures.ProtoHTTP, "unix", sock, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	fmt.Println("listening " + sock)
	<-sig
	srv.Close()
	return 0
}

// liveServeProcess starts the built-in HTTP backend answering after delay
// (10 body bytes) in a process of its own (this test binary, as
// liveServeMain), so that its scheduling does not mix with the client's,
// on a Unix socket in a temporary directory; the test's end stops it by
// its PID. It returns the backend's URL.
func liveServeProcess(t *testing.T, delay time.Duration) string {
	t.Helper()
	return liveServePathsProcess(t, delay, "")
}

// liveServePathsProcess is liveServeProcess with paths' own delays
// (PATH=DELAY, comma-separated).
func liveServePathsProcess(t *testing.T, delay time.Duration, paths string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "b.sock")
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), liveServeDelayEnv+"="+delay.String(), liveServeSockEnv+"="+sock, liveServePathsEnv+"="+paths)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "listening ") {
		t.Fatalf("backend process: %q, %v", line, err)
	}
	return "http://unix:" + sock + ":/"
}
