package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/report"
)

// parseableSweep fails unless dir/sweep.json is a whole sweep document.
func parseableSweep(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sw report.Sweep
	if err := json.Unmarshal(b, &sw); err != nil || len(sw.Series) == 0 {
		t.Fatalf("sweep.json does not parse (%v): %d bytes", err, len(b))
	}
	return b
}

// TestSweepKilledWhileWriting kills the sweep binary (SIGKILL) while it
// writes its outputs, held there by the write-pause test hook once every
// temporary file is whole, and then at random moments of whole runs: the
// previous sweep.json always parses, and while held it is exactly the
// previous one.
func TestSweepKilledWhileWriting(t *testing.T) {
	bin := buildBinary(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	out := t.TempDir()
	args := []string{"sweep", "-q", "-n", "20", "-c", "1,2", "--out", out, srv.URL("/")}
	if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("first sweep: %v\n%s", err, b)
	}
	old := parseableSweep(t, out)

	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), report.WritePauseEnv+"=60s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	temps := func() int {
		m, _ := filepath.Glob(filepath.Join(out, ".sweep.*.tmp-*"))
		return len(m)
	}
	held := waitFor(30*time.Second, func() bool { return temps() == 5 })
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !held {
		t.Fatal("the sweep never reached its write")
	}
	if b := parseableSweep(t, out); string(b) != string(old) {
		t.Error("sweep.json changed before its rename")
	}

	// Kills at random moments of whole runs (bounded: 12 runs).
	for range 12 {
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		parseableSweep(t, out)
	}
}
