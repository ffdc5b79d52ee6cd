package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/sockets"
)

// TestOpenModelLinesFromTheRun: an open-model run with a ceiling far above
// what is ever in flight (-c 256 against a 2 ms backend at 200 req/s)
// prints no ab line computed with 256: the time per request is the mean
// measured, the concurrency level the mean in flight, and no ceiling note
// appears (256 workers busy at once would take a 1.3 s stall of the
// machine).
func TestOpenModelLinesFromTheRun(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Delay: 2 * time.Millisecond})
	s := benchJSON(t, "--rate", "200", "-n", "300", "-c", "256", "-k", srv.URL("/"))
	if s.Open == nil || s.Complete != 300 || s.Failed != 0 {
		t.Fatalf("open %+v, %d complete, %d failed", s.Open, s.Complete, s.Failed)
	}
	closedFormula := 256 * s.TimeTaken * 1000 / float64(s.Complete)
	if s.TimePerRequest != s.ConnectionTimes.Total.Mean {
		t.Errorf("time per request %.3f ms, want the measured mean %.3f ms (ab's c × time / done would be %.3f)",
			s.TimePerRequest, s.ConnectionTimes.Total.Mean, closedFormula)
	}
	// Little's law: completions per second × mean time in the system.
	if want := s.RequestsPerSecond * s.ConnectionTimes.Total.Mean / 1000; s.Open.MeanInFlight != want || want <= 0 {
		t.Errorf("mean in flight %.4f, want %.4f", s.Open.MeanInFlight, want)
	}
	if s.Open.CeilingLate != 0 {
		t.Errorf("%d requests counted as held back by -c 256", s.Open.CeilingLate)
	}
	// The pacer's threads ran with a short time slice, where the kernel
	// has one (sockets.SetSchedSlice), and got the default back after.
	if _, err := sockets.SetSchedSlice(uint64(execute.OpenModelSlice)); err == nil {
		sockets.SetSchedSlice(0)
		if s.Client.TimeSliceMs != 0.1 {
			t.Errorf("client time slice %v ms in an open-model run at 200 req/s, want 0.1", s.Client.TimeSliceMs)
		}
		// Above OpenModelSliceMaxRate the threads keep the default.
		hi := benchJSON(t, "--rate", "5000", "-n", "300", "-c", "8", "-k", srv.URL("/"))
		if hi.Client.TimeSliceMs != 0 {
			t.Errorf("client time slice %v ms at 5000 req/s, want the kernel's default", hi.Client.TimeSliceMs)
		}
	}
	var b bytes.Buffer
	if err := report.Text(&b, &s, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, bad := range []string{"Ceiling:", "Concurrency Level:      256", fmt.Sprintf("%.3f [ms] (mean)", closedFormula)} {
		if strings.Contains(text, bad) {
			t.Errorf("the open-model report has %q:\n%s", bad, text)
		}
	}
	for _, want := range []string{
		fmt.Sprintf("Concurrency Level:      %.2f (mean in flight", s.Open.MeanInFlight),
		fmt.Sprintf("Time per request:       %.3f [ms] (mean, measured", s.ConnectionTimes.Total.Mean),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the open-model report lacks %q:\n%s", want, text)
		}
	}
}

// TestOpenModelCeilingReached: a serial backend with a 20 ms service time
// serves at most 50 req/s; asked for 100 with -c 2, both workers are busy
// whenever a request falls due, so the ceiling note appears, with how
// often. The closed model's report keeps ab's lines.
func TestOpenModelCeilingReached(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 20 * time.Millisecond})
	s := benchJSON(t, "--rate", "100", "-n", "40", "-c", "2", "-k", srv.URL("/"))
	if s.Open == nil || s.Complete+s.Failed == 0 {
		t.Fatalf("open %+v, %d complete, %d failed", s.Open, s.Complete, s.Failed)
	}
	if s.Open.CeilingLate == 0 {
		t.Fatalf("no request counted as held back by -c 2 against a backend at half the rate: %+v", *s.Open)
	}
	var b bytes.Buffer
	if err := report.Text(&b, &s, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Ceiling:                -c 2 was reached and held the rate back: %d of %d due requests",
		s.Open.CeilingLate, s.Open.DueRequests)
	if !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}

	closed := benchJSON(t, "-n", "10", "-c", "2", "-k", srv.URL("/"))
	if want := float64(closed.Concurrency) * closed.TimeTaken * 1000 / float64(closed.Complete); closed.TimePerRequest != want {
		t.Errorf("closed model: time per request %.3f ms, want ab's c × time / done %.3f", closed.TimePerRequest, want)
	}
	b.Reset()
	if err := report.Text(&b, &closed, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if closed.Client.TimeSliceMs != 0 {
		t.Errorf("closed model: client time slice %v ms, want the kernel's default", closed.Client.TimeSliceMs)
	}
	if !strings.Contains(b.String(), "Concurrency Level:      2\n") || !strings.Contains(b.String(), " [ms] (mean)\n") {
		t.Errorf("closed-model report lost ab's lines:\n%s", b.String())
	}
}
