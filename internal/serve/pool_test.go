package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// childOptions carries a pool test's settings to its children (this test
// binary again), which cannot parse serve's command line.
const childOptions = "SERVE_TEST_OPTIONS"

// TestMain runs a pool test's child: with ChildEnv set, this binary is a
// child of runPool and serves until SIGTERM.
func TestMain(m *testing.M) {
	if os.Getenv(ChildEnv) != "" {
		var o Options
		if err := json.Unmarshal([]byte(os.Getenv(childOptions)), &o); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		if err := Run(ctx, o, io.Discard); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// TestPool: a pool's master prints the readiness line and serves nothing;
// its children (this program again) answer on its socket, with the
// preload mapped by every process, and stop with it.
func TestPool(t *testing.T) {
	o := valid("tcp:127.0.0.1:0")
	o.Processes, o.Preload, o.Model, o.Status = 2, 3<<20, "serial", 202
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(childOptions, string(b))
	f, done := startRun(t, o)
	if len(f) != 4 || f[1] != "http" || f[2] != "tcp" {
		t.Fatalf("readiness line %q", f)
	}
	for range 4 {
		if code := get(t, f[3]); code != 202 {
			t.Fatalf("status %d, want 202", code)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("the master returned while serving: %v", err)
	default:
	}
}

// TestPreload: the preload file has its size, not a byte of zeros at a
// page's start, and maps and reads.
func TestPreload(t *testing.T) {
	const size = 1<<20 + 5000
	f, err := preloadFile(size)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() != size {
		t.Fatalf("size %v, %v; want %d", fi.Size(), err, size)
	}
	unmap, err := mapAndRead(f, size)
	if err != nil {
		t.Fatal(err)
	}
	unmap()
	b := make([]byte, 1)
	for off := int64(0); off < size; off += int64(os.Getpagesize()) {
		if _, err := f.ReadAt(b, off); err != nil || b[0] == 0 {
			t.Fatalf("byte at %d: %v, %v", off, b[0], err)
		}
	}
}
