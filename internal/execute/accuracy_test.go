package execute_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
)

// Tests of measurement truth against built-in backends whose behaviour is
// known, run as bench runs them (plan.Options.Build, execute.Run).
// Tolerances are wide: the machines are shared and noisy.

// TestClosedModelSerialBackend: a serial backend with a 10 ms service time
// gives about 100 req/s, and at concurrency c the median latency is about
// c × 10 ms (each request waits for the others in the listen backlog).
func TestClosedModelSerialBackend(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 10 * time.Millisecond})
	for _, c := range []int{1, 4} {
		retryOpenSpeed(t, func() (bad []string) {
			s := notesRun(t, srv.URL("/"), 60, c, nil)
			if s.Failed != 0 || s.Complete != 60 {
				t.Fatalf("c=%d: %d complete, %d failed", c, s.Complete, s.Failed)
			}
			if s.RequestsPerSecond < 60 || s.RequestsPerSecond > 105 {
				bad = append(bad, fmt.Sprintf("c=%d: %.1f req/s, want about 100", c, s.RequestsPerSecond))
			}
			want := map[int]float64{1: 10, 4: 40}[c]
			if med := s.ConnectionTimes.Total.Median; med < want*0.8 || med > want*1.6 {
				bad = append(bad, fmt.Sprintf("c=%d: median %.1f ms, want about %.0f", c, med, want))
			}
			return bad
		})
	}
}

// TestOpenModelRate: at 50 req/s against a 10 ms backend the achieved rate
// is the asked rate and the latency about 10 ms.
func TestOpenModelRate(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Delay: 10 * time.Millisecond})
	retryOpenSpeed(t, func() (bad []string) {
		s := openRun(t, srv.URL("/"), 50, 75, 0, 4)
		if s.Open == nil || s.Failed != 0 || s.Complete != 75 {
			t.Fatalf("open %+v failed %d complete %d", s.Open, s.Failed, s.Complete)
		}
		if r := s.Open.RateAchieved; r < 45 || r > 52 {
			bad = append(bad, fmt.Sprintf("achieved %.1f req/s, want 50", r))
		}
		if s.TimeTaken < 1.4 || s.TimeTaken > 2.5 {
			bad = append(bad, fmt.Sprintf("75 requests at 50/s took %.2f s", s.TimeTaken))
		}
		if med := s.Percentiles["50"]; med < 9 || med > 25 {
			bad = append(bad, fmt.Sprintf("median %.1f ms, want about 10", med))
		}
		if s.Open.CeilingLate > 2 {
			bad = append(bad, fmt.Sprintf("%d requests waited for a worker with 4 workers and 1 busy", s.Open.CeilingLate))
		}
		return bad
	})
}

// TestOpenModelShowsStall: a backend that freezes for 1 s once, under an
// open-model run with a low in-flight ceiling, shows the stall in the
// corrected p99 and not in the uncorrected one (coordinated omission).
func TestOpenModelShowsStall(t *testing.T) {
	retryOpenSpeed(t, func() (bad []string) {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{
			Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 2 * time.Millisecond,
			Stall: time.Second, StallAt: 100})
		po := benchLoad{n: 400, c: 2, timeout: 30}.options(srv.URL("/"))
		po.Rate, po.RateSet = 100, true
		s := runBenchPlan(t, context.Background(), po, execute.Options{Quiet: true, Observe: true}).Summary
		if s.Failed != 0 || s.Complete != 400 {
			t.Fatalf("failed %d complete %d", s.Failed, s.Complete)
		}
		corrected, uncorrected := s.Percentiles["99"], s.UncorrectedPercentiles["99"]
		if corrected < 500 {
			bad = append(bad, fmt.Sprintf("corrected p99 %.1f ms does not show the 1 s stall", corrected))
		}
		if uncorrected > 200 {
			bad = append(bad, fmt.Sprintf("uncorrected p99 %.1f ms shows the stall; only ~2 requests saw it", uncorrected))
		}
		if s.Open.CeilingLate < 20 || s.Open.LateMaxMs < 500 {
			bad = append(bad, fmt.Sprintf("open model %+v: the ceiling should have held back ~90 requests", *s.Open))
		}
		return bad
	})
}

// TestRawRowsAndSpectrum: the raw CSV (bench's --raw) has a header and a
// row per request, each with its start, status and class (no intended
// start in the closed model), and the report with the spectrum
// (--percentiles) has its lines.
func TestRawRowsAndSpectrum(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{BodyBytes: 7})
	var raw bytes.Buffer
	run := runBenchPlan(t, context.Background(), benchLoad{n: 250, c: 3, timeout: 30}.options(srv.URL("/")),
		execute.Options{Quiet: true, Observe: true, Raw: &raw})
	var b bytes.Buffer
	if err := report.Text(&b, &run.Summary, report.TextOptions{Spectrum: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Percentile spectrum (ms)", "99.999%", "Client CPU:"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	rows, err := csv.NewReader(&raw).ReadAll()
	if err != nil || len(rows) != 251 {
		t.Fatalf("raw file: %v, %d rows", err, len(rows))
	}
	if strings.Join(rows[0], ",") != "intended_start,start,connect_ms,waiting_ms,total_ms,status,bytes,class" {
		t.Errorf("header %v", rows[0])
	}
	for _, r := range rows[1:] {
		if r[0] != "" || r[5] != "200" || r[7] != "ok" || r[1] == "" {
			t.Fatalf("row %v", r)
		}
	}
}

// TestABCompatArithmetic: with ab's arithmetic (--ab-compat) the
// percentiles are whole milliseconds.
func TestABCompatArithmetic(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	s := notesRun(t, srv.URL("/"), 51, 1, func(po *plan.Options) { po.ABCompat = true })
	if !s.ABCompat || s.Complete != 51 {
		t.Fatalf("ab_compat %v complete %d", s.ABCompat, s.Complete)
	}
	for k, v := range s.Percentiles {
		if v != float64(int64(v)) {
			t.Errorf("ab percentile %s = %v, not whole ms", k, v)
		}
	}
}

// TestSameCountsAsAb runs ab (Debian's apache2-utils) and an HTTP/1.0 run
// (bench --http1.0) against the same HTTP/1.0 target: Document Length,
// Complete requests, Total transferred and HTML transferred of the text
// report must agree.
func TestSameCountsAsAb(t *testing.T) {
	ab, err := exec.LookPath("ab")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ab is not installed (apt-get install apache2-utils)")
		}
		t.Skip("ab is not installed")
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 1234})
	for _, ka := range []bool{false, true} {
		args := []string{"-n", "200", "-c", "4"}
		if ka {
			args = append(args, "-k")
		}
		cmd := exec.Command(ab, append(args, srv.URL("/"))...)
		outb, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ab: %v\n%s", err, outb)
		}
		abOut := string(outb)
		s := notesRun(t, srv.URL("/"), 200, 4, func(po *plan.Options) { po.HTTP10, po.KeepAlive = true, ka })
		bbOut := reportText(t, &s)
		for _, label := range []string{"Document Length", "Complete requests", "Failed requests", "Total transferred", "HTML transferred", "Keep-Alive requests"} {
			re := regexp.MustCompile("(?m)^" + label + ": +(.*)$")
			a, b := re.FindStringSubmatch(abOut), re.FindStringSubmatch(bbOut)
			if !ka && label == "Keep-Alive requests" {
				if a != nil || b != nil {
					t.Errorf("keep-alive line without -k: ab %v backbench %v", a, b)
				}
				continue
			}
			if a == nil || b == nil || a[1] != b[1] {
				t.Errorf("-k=%v %s: ab %q, backbench %q", ka, label, a, b)
			}
		}
	}
}
