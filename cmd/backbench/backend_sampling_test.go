package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests sample a backend process of their own (the binary's
// serve, a pool of processes); php-fpm's status page is tested in
// internal/execute and internal/sweep (fpm_status_test.go).

// TestBackendMemoryPSS: a pool of 3 processes sharing 64 MiB of read-only
// data (serve --processes 3 --preload) uses about a third of its summed RSS;
// bench's PSS figures agree with smaps_rollup read here.
func TestBackendMemoryPSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		t.Skip("no smaps_rollup")
	}
	bin := buildBinary(t)
	srv := exec.Command(bin, "serve", "--processes", "3", "--preload", strconv.Itoa(64<<20), "--listen", "tcp:127.0.0.1:0")
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
	})
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatal("serve printed nothing")
	}
	f := strings.Fields(sc.Text())
	url := "http://" + f[len(f)-1] + "/"
	master := srv.Process.Pid
	// The children have read the preload once they serve: wait for all 3.
	if !waitFor(10*time.Second, func() bool { return len(poolPIDs(master)) == 4 }) {
		t.Fatalf("pool has %v processes, want 4", poolPIDs(master))
	}
	code, _, errs := runMain(t, context.Background(), "bench", "-q", "-n", "20", url)
	if code != 0 {
		t.Fatalf("warm-up: exit %d: %s", code, errs)
	}
	s := benchJSON(t, "-k", "-c", "3", "-n", "600", "--backend-pid", strconv.Itoa(master), url)
	var pss, rss int64
	for _, pid := range poolPIDs(master) {
		r, err := readRollupForTest(pid)
		if err != nil {
			t.Fatal(err)
		}
		pss += r[0]
		rss += r[1]
	}
	b := s.Backend
	if b == nil || b.ProcessesMax != 4 || b.PSSFallback != 0 {
		t.Fatalf("backend %+v", b)
	}
	if b.PeakPSSBytes*2 > b.PeakRSSBytes {
		t.Errorf("peak PSS %d not well below peak RSS %d for a pool sharing 64 MiB", b.PeakPSSBytes, b.PeakRSSBytes)
	}
	for _, c := range []struct {
		what      string
		got, want int64
	}{{"peak PSS", b.PeakPSSBytes, pss}, {"peak RSS", b.PeakRSSBytes, rss}} {
		if d := float64(c.got-c.want) / float64(c.want); d > 0.1 || d < -0.1 {
			t.Errorf("%s %d, smaps_rollup says %d after the run: %.0f%% apart", c.what, c.got, c.want, d*100)
		}
	}
	// The means are of samples through the run, while a child that had
	// served nothing yet may still be faulting in its pages: within the
	// peak, and the pool's sharing seen in them too.
	if b.MeanPSSBytes <= 0 || b.MeanPSSBytes > b.PeakPSSBytes || b.MeanRSSBytes <= 0 || b.MeanRSSBytes > b.PeakRSSBytes ||
		b.MeanPSSBytes*2 > b.MeanRSSBytes {
		t.Errorf("mean PSS %d, mean RSS %d: not within the peaks %d, %d, or PSS not well below RSS",
			b.MeanPSSBytes, b.MeanRSSBytes, b.PeakPSSBytes, b.PeakRSSBytes)
	}
	if b.USSMaxBytes <= 0 || b.USSMaxBytes > 32<<20 {
		t.Errorf("USS per process max %d: the shared 64 MiB is not private", b.USSMaxBytes)
	}
}

// TestBackendResourceUse samples a built-in backend run as a child process:
// its CPU seconds grow with --work, its RSS is not zero, and it is one
// process.
func TestBackendResourceUse(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "backbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cpu := map[string]float64{}
	for _, work := range []string{"1ms", "6ms"} {
		sock := filepath.Join(t.TempDir(), "w.sock")
		srv := exec.Command(bin, "serve", "--protocol", "fcgi", "--model", "serial", "--work", work, "--listen", "unix:"+sock)
		stdout, _ := srv.StdoutPipe()
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { // also when a check below fails the test
			srv.Process.Signal(syscall.SIGTERM)
			srv.Wait()
		})
		if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.HasPrefix(line, "listening") {
			t.Fatalf("serve: %q %v", line, err)
		}
		s := benchJSON(t, "-k", "-n", "100", "--backend-pid", strconv.Itoa(srv.Process.Pid), "fcgi://unix:"+sock+":/")
		if work == "1ms" {
			// A sweep records the backend's use per level: CSV columns
			// and a third chart panel.
			code, _, errs, dir := sweepOut(t, "-q", "-k", "-n", "20", "-c", "1,2", "--warmup", "0",
				"--backend-pid", strconv.Itoa(srv.Process.Pid), "fcgi://unix:"+sock+":/")
			if code != 0 {
				t.Fatalf("sweep: exit %d: %s", code, errs)
			}
			sw, rows := readSweep(t, dir)
			for _, l := range sw.Series[0].Levels {
				if l.Backend == nil || l.Backend.Samples < 2 || l.Backend.ProcessesMax != 1 {
					t.Errorf("sweep level %d: backend %+v", l.Concurrency, l.Backend)
				}
			}
			if len(rows) != 3 || rows[0][13] != "backend_cpu_seconds" || rows[1][14] == "" || rows[2][15] != "1" {
				t.Errorf("sweep.csv %v", rows)
			}
		}
		b := s.Backend
		if b == nil || s.Failed != 0 {
			t.Fatalf("backend %+v failed %d", b, s.Failed)
		}
		if b.ProcessesMax != 1 || b.PeakRSSBytes < 1<<20 || b.Samples < 2 {
			t.Errorf("work %s: %+v", work, *b)
		}
		cpu[work] = b.CPUSeconds
	}
	// 100 requests × 1 ms is 0.1 s of work; × 6 ms, 0.6 s.
	// (The busy loop runs until its wall time has passed, so on a loaded
	// machine it burns less CPU than that: the bounds are loose.)
	if cpu["6ms"] < 0.2 || cpu["6ms"] < 2*cpu["1ms"] {
		t.Errorf("backend CPU %v does not grow with --work", cpu)
	}
	code, _, errs := runMain(t, context.Background(), "bench", "--backend-pid", "999999999", "http://127.0.0.1:1/")
	if code != 2 || !strings.Contains(errs, "no process") {
		t.Errorf("missing pid: exit %d %q", code, errs)
	}
}

// poolPIDs returns pid and its children.
func poolPIDs(pid int) []int {
	pids := []int{pid}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			pids = append(pids, c)
		}
	}
	return pids
}

// readRollupForTest returns the Pss and Rss of smaps_rollup, in bytes.
func readRollupForTest(pid int) ([2]int64, error) {
	var out [2]int64
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return out, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Pss:":
			out[0] = v << 10
		case "Rss:":
			out[1] = v << 10
		}
	}
	return out, nil
}
