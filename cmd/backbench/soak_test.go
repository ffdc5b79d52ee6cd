package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/backbench/backbench/internal/stats"
)

// BenchmarkSoakRSS runs the built binary against a built-in backend in its
// own process, for request counts from 100k up (BACKBENCH_SOAK_MAX, default
// 1000000; 10000000 for the full soak), checks that the counts are exact, and
// reports the client's peak RSS (maxrss_KiB): it must stay flat as the count
// grows, since latencies go to fixed-size histograms.
//
//	go test -run '^$' -bench SoakRSS -benchtime 1x ./cmd/backbench
func BenchmarkSoakRSS(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "backbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "s.sock")
	srv := exec.Command(bin, "serve", "--protocol", "http", "--listen", "unix:"+sock)
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.HasPrefix(line, "listening") {
		b.Fatalf("serve: %q %v", line, err)
	}
	maxN := int64(1_000_000)
	if v, err := strconv.ParseInt(os.Getenv("BACKBENCH_SOAK_MAX"), 10, 64); err == nil && v > 0 {
		maxN = v
	}
	for n := int64(100_000); n <= maxN; n *= 10 {
		b.Run(strconv.FormatInt(n, 10), func(b *testing.B) {
			for range b.N {
				cmd := exec.Command(bin, "bench", "-q", "--format", "json", "-k", "-c", "8", "-n", strconv.FormatInt(n, 10), "http://unix:"+sock+":/")
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("bench: %v", err)
				}
				var s stats.Summary
				if err := json.Unmarshal(out, &s); err != nil {
					b.Fatal(err)
				}
				if s.Complete != n || s.Failed != 0 {
					b.Fatalf("complete %d failed %d of %d", s.Complete, s.Failed, n)
				}
				ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				b.ReportMetric(float64(ru.Maxrss), "maxrss_KiB")
				b.ReportMetric(s.RequestsPerSecond, "req/s")
			}
		})
	}
}
