package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/realbackend"
	"github.com/backbench/backbench/internal/summary"
)

// TestClusterOfSerialWorkers: five serial 10 ms workers reached without a
// balancer give about five times one worker's throughput, and the
// per-address lines add up to the totals.
func TestClusterOfSerialWorkers(t *testing.T) {
	opts := fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 10 * time.Millisecond, BodyBytes: 5}
	var args []string
	var first *fixtures.Server
	for i := range 5 {
		network := "tcp"
		if i%2 == 1 {
			network = "unix"
		}
		s := fixtures.StartTB(t, fixtures.ProtoFCGI, network, opts)
		if first == nil {
			first = s
		}
		args = append(args, "--upstream", s.Network+":"+s.Addr)
	}
	// A serial worker serves one kept connection at a time: one worker
	// gets one connection, five get five (round-robin, one each).
	var five summary.Summary
	withSpeedRetries(t, func() []string {
		one := benchJSON(t, "-k", "-n", "60", "-c", "1", first.URL("/"))
		five = benchJSON(t, append(args, "-k", "-n", "300", "-c", "5", first.URL("/"))...)
		if one.Failed != 0 || five.Failed != 0 {
			t.Fatalf("failures: one %d five %d %v", one.Failed, five.Failed, five.ErrorSamples)
		}
		if ratio := five.RequestsPerSecond / one.RequestsPerSecond; ratio < 3.2 || ratio > 6 {
			return []string{fmt.Sprintf("five workers %.0f req/s, one %.0f: ratio %.2f, want about 5", five.RequestsPerSecond, one.RequestsPerSecond, ratio)}
		}
		return nil
	})
	if len(five.Upstreams) != 5 || five.Balance != "round-robin" {
		t.Fatalf("upstreams %+v", five.Upstreams)
	}
	var req, complete int64
	var rps float64
	for _, u := range five.Upstreams {
		req += u.Requests
		complete += u.Complete
		rps += u.RequestsPerSecond
		if u.Requests < 40 || u.MeanMs <= 0 || u.P99Ms < u.MeanMs*0.5 {
			t.Errorf("upstream %+v", u)
		}
	}
	if req != 300 || complete != five.Complete || rps < five.RequestsPerSecond*0.99 || rps > five.RequestsPerSecond*1.01 {
		t.Errorf("per-address sums: requests %d complete %d req/s %.1f; totals %d %.1f", req, complete, rps, five.Complete, five.RequestsPerSecond)
	}
}

// TestClusterDeadAddress: one dead address shows as its own connect
// failures, and the run goes on at the others' pace.
func TestClusterDeadAddress(t *testing.T) {
	dead := deadTCPAddr(t)
	var args []string
	for range 3 {
		s := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
		args = append(args, "--upstream", "tcp:"+s.Addr)
	}
	args = append(args, "--upstream", "tcp:"+dead, "--balance", "round-robin", "-n", "400", "-c", "4", "http://"+dead+"/")
	code, out, errs := runMain(t, context.Background(), append([]string{"bench", "-q", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "warning: upstream tcp:"+dead) {
		t.Errorf("no warning for the dead upstream: %q", errs)
	}
	s := decodeSummary(t, out)
	if s.Complete+s.Failed != 400 || s.Failures.Connect != s.Failed || s.Failed < 80 || s.Failed > 120 {
		t.Errorf("complete %d failed %d (connect %d)", s.Complete, s.Failed, s.Failures.Connect)
	}
	for _, u := range s.Upstreams {
		if u.Address == "tcp:"+dead {
			if u.Failed != s.Failures.Connect || u.Complete != 0 {
				t.Errorf("dead upstream %+v", u)
			}
		} else if u.Failed != 0 || u.Complete < 80 {
			t.Errorf("live upstream %+v", u)
		}
	}
	// All dead: the target cannot be reached at all.
	code, _, errs = runMain(t, context.Background(), "bench", "--upstream", "tcp:"+dead, "http://"+dead+"/")
	if code != 1 || !strings.Contains(errs, "connection refused") {
		t.Errorf("all dead: exit %d %q", code, errs)
	}
}

// TestHTTPS: a TLS fixture over TCP and a Unix socket, with and without
// keep-alive: zero failures, protocol and cipher reported, sessions resumed
// when connections are not kept.
func TestHTTPS(t *testing.T) {
	cfg, err := fixtures.SelfSignedTLS()
	if err != nil {
		t.Fatal(err)
	}
	for _, network := range []string{"tcp", "unix"} {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{TLS: cfg, BodyBytes: 100})
		for _, ka := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/keepalive=%v", network, ka), func(t *testing.T) {
				args := []string{"--insecure", "-n", "50", "-c", "2", srv.URL("/")}
				if ka {
					args = append(args, "-k")
				}
				s := benchJSON(t, args...)
				if s.Failed != 0 || s.Complete != 50 || s.DocumentLength != 100 {
					t.Fatalf("complete %d failed %d doclen %d %v", s.Complete, s.Failed, s.DocumentLength, s.ErrorSamples)
				}
				if s.TLS == nil || !strings.HasPrefix(s.TLS.Protocol, "TLSv1.") || s.TLS.Cipher == "" {
					t.Fatalf("tls %+v", s.TLS)
				}
				if ka && s.TLS.Handshakes != 2 {
					t.Errorf("keep-alive: %d handshakes for 2 connections", s.TLS.Handshakes)
				}
				if !ka && (s.TLS.Handshakes != 50 || s.TLS.Resumed < 40) {
					t.Errorf("no keep-alive: %d handshakes, %d resumed", s.TLS.Handshakes, s.TLS.Resumed)
				}
				if s.ConnectionTimes.Connect.Max <= 0 {
					t.Error("the handshake is not in Connect")
				}
			})
		}
		// Without --insecure the self-signed certificate is refused: one
		// line, exit 1, no report.
		code, out, errs := runMain(t, context.Background(), "bench", "-q", "--format", "json", "-n", "2", srv.URL("/"))
		if code != 1 || out != "" || strings.Count(errs, "\n") != 1 ||
			!strings.Contains(errs, "certificate does not verify: x509: certificate signed by unknown authority; --insecure accepts it") {
			t.Errorf("unverified certificate: exit %d, stderr %q, stdout %q", code, errs, out)
		}
	}
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "-n", "3", "--insecure",
		fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{TLS: cfg}).URL("/"))
	if code != 0 || !strings.Contains(out, "SSL/TLS Protocol:       TLSv1.3,TLS_") || !strings.Contains(out, "Server Temp Key:") {
		t.Errorf("exit %d %s\n%s", code, errs, out)
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

// TestFPMStatus reads php-fpm's status page before and after a run.
func TestFPMStatus(t *testing.T) {
	fpm := realbackend.PHPFPM(t, "unix")
	s := benchJSON(t, "-k", "-n", "40", "-c", "2", "--document-root", fpm.DocRoot,
		"--fpm-status", realbackend.StatusPath, "--backend-pid", strconv.Itoa(fpm.PID), fpm.URL(realbackend.HelloScript))
	if s.Failed != 0 || s.Backend == nil {
		t.Fatalf("failed %d backend %+v", s.Failed, s.Backend)
	}
	b := s.Backend
	if b.FPMStatusStart["pool"] != "backbench" || b.FPMStatusEnd["listen queue"] == "" {
		t.Errorf("status %v / %v", b.FPMStatusStart, b.FPMStatusEnd)
	}
	if b.ProcessesMax != 5 { // the master and pm.max_children = 4
		t.Errorf("php-fpm processes %d, want 5", b.ProcessesMax)
	}
	// A sweep puts the status read at the end of each level in its CSV.
	code, _, errs, dir := sweepOut(t, "-q", "-k", "-n", "20", "-c", "1,2", "--warmup", "0", "--document-root", fpm.DocRoot,
		"--fpm-status", realbackend.StatusPath, fpm.URL(realbackend.HelloScript))
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	_, rows := readSweep(t, dir)
	if len(rows) != 3 || rows[0][16] != "fpm_listen_queue" {
		t.Fatalf("sweep.csv %v", rows)
	}
	for _, row := range rows[1:] {
		if active, err := strconv.Atoi(row[17]); err != nil || active < 1 || row[16] == "" || row[18] == "" {
			t.Errorf("level %s: php-fpm columns %q", row[1], row[16:])
		}
	}
}

func decodeSummary(t *testing.T, out string) summary.Summary {
	t.Helper()
	var s summary.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	return s
}
