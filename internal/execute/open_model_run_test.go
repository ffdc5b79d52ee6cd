package execute_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// openSpeedAttempts is how many times a speed assertion of the open model
// is tried: a loaded machine may slow one attempt down.
const openSpeedAttempts = 3

// retryOpenSpeed runs attempt until it reports no problem, at most
// openSpeedAttempts times, and fails the test with the last problems.
func retryOpenSpeed(t *testing.T, attempt func() []string) {
	t.Helper()
	for i := 1; ; i++ {
		bad := attempt()
		if len(bad) == 0 {
			return
		}
		if i == openSpeedAttempts {
			t.Fatalf("after %d attempts: %s", i, strings.Join(bad, "; "))
		}
		t.Logf("attempt %d: %s; trying again", i, strings.Join(bad, "; "))
	}
}

// openRun runs bench --rate rate -c c -k against url, with -n n (or -t
// limit when n is 0), and returns the summary.
func openRun(t *testing.T, url string, rate float64, n int64, limit time.Duration, c int) stats.Summary {
	t.Helper()
	po := plan.Defaults(url)
	po.Rate, po.RateSet, po.Concurrency, po.KeepAlive = rate, true, c, true
	if n > 0 {
		po.Requests, po.RequestsSet = n, true
	} else {
		po.Duration, po.TimeLimitSet = limit, true
	}
	return runBenchPlan(t, context.Background(), po, execute.Options{Quiet: true, Observe: true}).Summary
}

// TestOpenModelPacingError: against a fast backend with free workers, the
// open model's corrected latencies exceed the uncorrected ones only by the
// client's own pacing error, which must stay within tens of microseconds:
// corrected minus uncorrected at most 0.05 ms at p50 and 0.3 ms at p99, at
// 1,000 requests a second.
//
// A machine shared with other work takes the CPUs from the whole process
// for tens of milliseconds at times, which no pacing can undo: an attempt
// whose scheduler probe saw the client's goroutines wait for a CPU longer
// than a bound can tell (1 ms for the p99 bound, 2 ms for the p50 one) is
// retried, and on the last attempt that bound is inconclusive (logged, not
// failed); a bound missed by an attempt that was not starved fails.
// A broken pacer (a plain timer wakes 0.5 to 1 ms late) misses the p50
// bound on any machine that lets the client run.
//
// The race detector instruments the client's own code and slows it several
// times over, and the package's other tests, run beside it, take the CPUs
// from it: the bounds are measured on a plain build with nothing else
// running, as make test runs it (apart, without -race, with
// BACKBENCH_PACING=1). Elsewhere it skips.
func TestOpenModelPacingError(t *testing.T) {
	if pacingRaceDetector || os.Getenv("BACKBENCH_PACING") != "1" {
		t.Skip("pacing accuracy is measured apart, on a plain build: BACKBENCH_PACING=1 go test -run TestOpenModelPacingError (make test does)")
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	attempt := 0
	retryOpenSpeed(t, func() (bad []string) {
		// A burst of other work holds the CPUs for a while; the next
		// attempt waits a little for it to pass.
		if attempt++; attempt > 1 {
			time.Sleep(2 * time.Second)
		}
		s := openRun(t, srv.URL("/"), 1000, 1000, 0, 16)
		if s.Open == nil || s.Complete != 1000 || s.Failed != 0 || s.Open.ClientLatenessMs == nil {
			t.Fatalf("complete %d failed %d open %+v", s.Complete, s.Failed, s.Open)
		}
		// A client whose goroutines waited longer than starve for a CPU
		// cannot be judged on that bound: 1 ms against the p99 bound of
		// 0.3 ms, 2 ms against the p50 bound (a median moves only when
		// the waits are many).
		for _, k := range []struct {
			rank        string
			max, starve float64
		}{{"50", 0.05, 2}, {"99", 0.3, 1}} {
			starved := s.Client.SchedulerLateMaxMs > k.starve
			d := s.Percentiles[k.rank] - s.UncorrectedPercentiles[k.rank]
			if d <= k.max {
				continue
			}
			msg := fmt.Sprintf("p%s corrected %.3f ms - uncorrected %.3f ms = %.3f ms > %.2f ms (client lateness %+v, CPU waits up to %.1f ms)",
				k.rank, s.Percentiles[k.rank], s.UncorrectedPercentiles[k.rank], d, k.max, *s.Open.ClientLatenessMs, s.Client.SchedulerLateMaxMs)
			// A client kept off the CPU for milliseconds cannot pace to
			// tens of µs: on the last attempt that is inconclusive, not a
			// failure (a broken pacer still fails on a machine that lets
			// the client run).
			if starved {
				if attempt < openSpeedAttempts {
					bad = append(bad, msg)
				} else {
					t.Logf("inconclusive on a starved machine: %s", msg)
				}
				continue
			}
			bad = append(bad, msg)
		}
		return bad
	})
}

// TestOpenModelAccounting: a serial 10 ms backend asked for 500 requests a
// second for 1 s with -c 2 does about 100 of them; every one of the ~500
// due is complete, failed or unsent; the text report has the due line.
func TestOpenModelAccounting(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 10 * time.Millisecond})
	s := openRun(t, srv.URL("/"), 500, 0, time.Second, 2)
	o := s.Open
	if o == nil {
		t.Fatal("no open_model")
	}
	if got := s.Complete + s.Failed - s.Failures.Length + o.UnsentRequests; got != o.DueRequests {
		t.Errorf("complete %d + failed %d + unsent %d = %d, want due %d", s.Complete, s.Failed, o.UnsentRequests, got, o.DueRequests)
	}
	// Due counts to the run's actual end, which a loaded machine can push
	// past 1 s (543 due was seen under go test -race -count=3 on a busy
	// 2-core machine): the upper bound is loose, the identity above exact.
	if o.DueRequests < 480 || o.DueRequests > 650 || s.Complete > 150 || o.UnsentRequests < 330 {
		t.Errorf("due %d, complete %d, unsent %d: want about 500, 100, 400", o.DueRequests, s.Complete, o.UnsentRequests)
	}
	// The unsent waited from their intended start to the end: the
	// corrected p99 is most of the run.
	if p := s.Percentiles["99"]; p < 500 {
		t.Errorf("corrected p99 %.1f ms: the unsent requests are missing from it", p)
	}
	short := openRun(t, srv.URL("/"), 500, 0, 300*time.Millisecond, 2)
	var b bytes.Buffer
	if err := report.Text(&b, &short, report.TextOptions{}); err != nil || !strings.Contains(b.String(), "Due requests:") || !strings.Contains(b.String(), "unsent") {
		t.Errorf("%v: text report lacks the due line:\n%s", err, b.String())
	}
}

// TestOpenModelLinesFromTheRun: an open-model run with a ceiling far above
// what is ever in flight (-c 256 against a 2 ms backend at 200 req/s)
// prints no ab line computed with 256: the time per request is the mean
// measured, the concurrency level the mean in flight, and no ceiling note
// appears (256 workers busy at once would take a 1.3 s stall of the
// machine).
func TestOpenModelLinesFromTheRun(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Delay: 2 * time.Millisecond})
	s := openRun(t, srv.URL("/"), 200, 300, 0, 256)
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
		slice := s.Client.TimeSliceMs
		if slice != 0.1 {
			// The slice is set on every thread of the process and read
			// back: a run of another test in this test process that
			// restores the default between the two makes the read-back
			// differ (backbench itself runs one run at a time). A second
			// run tells a slice never set from that.
			t.Logf("client time slice %v ms: run again", slice)
			slice = openRun(t, srv.URL("/"), 200, 300, 0, 256).Client.TimeSliceMs
		}
		if slice != 0.1 {
			t.Errorf("client time slice %v ms in an open-model run at 200 req/s, want 0.1", slice)
		}
		// Above OpenModelSliceMaxRate the threads keep the default.
		if hi := openRun(t, srv.URL("/"), 5000, 300, 0, 8); hi.Client.TimeSliceMs != 0 {
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
	s := openRun(t, srv.URL("/"), 100, 40, 0, 2)
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

	lo := benchLoad{n: 10, c: 2, timeout: 30, keepAlive: true}
	closed := runBenchPlan(t, context.Background(), lo.options(srv.URL("/")), execute.Options{Quiet: true, Observe: true}).Summary
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
