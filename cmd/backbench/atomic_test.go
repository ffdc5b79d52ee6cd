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
// writes its outputs: first once its five temporary files exist (the
// write-pause test hook holds it before the renames, so the kill comes
// while it writes or while it waits to rename), then at random moments of
// whole runs. The previous sweep.json always parses, and after the first
// kill it is exactly the previous one.
func TestSweepKilledWhileWriting(t *testing.T) {
	onceAcrossEngines(t)
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

// TestFailedRunKeepsOutputs runs bench (-g, -e), sweep and capacity
// against a Unix socket that nobody listens on, over the outputs of an
// earlier run: each fails, and every previous file is left as it was,
// with no temporary file beside it (os.Create used to empty -g and -e
// before the run).
func TestFailedRunKeepsOutputs(t *testing.T) {
	dir := t.TempDir()
	url := "http://unix:" + filepath.Join(dir, "nobody.sock") + ":/"
	old := map[string]string{}
	for _, n := range []string{"g.tsv", "e.csv", "sw/sweep.json", "sw/sweep.csv", "cap/capacity.json"} {
		p := filepath.Join(dir, n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("previous "+n), 0o644)
		old[p] = "previous " + n
	}
	for _, args := range [][]string{
		{"bench", "-q", "-n", "2", "-g", filepath.Join(dir, "g.tsv"), "-e", filepath.Join(dir, "e.csv"), url},
		{"sweep", "-q", "-n", "2", "-c", "1", "--out", filepath.Join(dir, "sw"), url},
		{"capacity", "-q", "--slo", "p99<=1s", "-t", "0.1", "--warmup", "0", "--out", filepath.Join(dir, "cap"), url},
	} {
		if code, _, _ := runMain(t, t.Context(), args...); code == 0 {
			t.Errorf("%s: exit 0 against nobody", args[0])
		}
	}
	for p, want := range old {
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Errorf("%s now holds %q", p, b)
		}
	}
	tmp, _ := filepath.Glob(filepath.Join(dir, "*", ".*.tmp-*"))
	tmp2, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	if len(tmp)+len(tmp2) > 0 {
		t.Errorf("temporary files left: %q %q", tmp, tmp2)
	}
}
