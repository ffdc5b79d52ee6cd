package execute_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/stats"
)

// These tests drive a run as bench does (plan.Options.Build, then
// execute.Run) against the built-in backends' faults (fixtures): every
// failure lands in its class, the accounting holds and the notes name
// the connection's realities. internal/plan is imported to build the
// input, the plan, as bench builds it.

// benchLoad is the load of one faults run: bench's -n, -c, -s, -k (and
// --engine when not "").
type benchLoad struct {
	n, c      int
	timeout   float64 // seconds
	keepAlive bool
	engine    string
}

// options are the plan options of l against url, as bench's flags would
// set them.
func (l benchLoad) options(url string) plan.Options {
	po := plan.Defaults(url)
	po.Requests, po.RequestsSet = int64(l.n), true
	po.Concurrency = l.c
	po.Timeout = time.Duration(l.timeout * float64(time.Second))
	po.KeepAlive = l.keepAlive
	if l.engine != "" {
		po.Engine = l.engine
	}
	return po
}

// runBenchPlan builds po's plan and runs it (execute.Run, with eo) as
// bench does, failing the test on an error.
func runBenchPlan(t *testing.T, ctx context.Context, po plan.Options, eo execute.Options) *stats.Run {
	t.Helper()
	l, err := po.Build()
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if eo.Version == "" {
		eo.Version = "test"
	}
	run, err := execute.Run(ctx, l.Plan, eo)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return run
}

// faultCase is one fault of a built-in backend and what a run must make
// of it.
type faultCase struct {
	proto, fault string
	// class is the failure class every faulty request must land in
	// ("length": half of them, the other half being the reference
	// length); "" means the requests complete.
	class string
	// msg matches an error sample (not checked for "" and "length").
	msg string
	// timeout is the request timeout in seconds (0: see runTimeout).
	timeout float64
}

// runTimeout is the request timeout, in seconds, that the runs of fc
// use: its own timeout, else 0.3 for a fault that times out, else 3.
func (fc faultCase) runTimeout() float64 {
	switch {
	case fc.timeout != 0:
		return fc.timeout
	case fc.class == "timeout":
		return 0.3 // the run waits for it: short
	default:
		// A fault answered at once must not time out on a loaded machine
		// running these subtests in parallel (0.3 s did under go test
		// -count=3); the run does not wait for it.
		return 3
	}
}

// faultCases lists every fault of both protocols (TestFaultCasesCoverAll
// keeps the list complete).
var faultCases = []faultCase{
	{proto: "fcgi", fault: fixtures.FaultCut, class: "receive", msg: "closed before END_REQUEST"},
	{proto: "fcgi", fault: fixtures.FaultBadVersion, class: "protocol", msg: "bad record version 2"},
	{proto: "fcgi", fault: fixtures.FaultGarbage, class: "protocol", msg: "bad record version"},
	{proto: "fcgi", fault: fixtures.FaultShortRecord, class: "receive", msg: "closed before END_REQUEST"},
	{proto: "fcgi", fault: fixtures.FaultShortRecordHang, class: "timeout", msg: "timeout"},
	{proto: "fcgi", fault: fixtures.FaultWrongIDEnd, class: "protocol", msg: "END_REQUEST record for request id 2"},
	{proto: "fcgi", fault: fixtures.FaultWrongIDStdout, class: "protocol", msg: "STDOUT record for request id 2"},
	{proto: "fcgi", fault: fixtures.FaultNoEnd, class: "receive", msg: "closed before END_REQUEST"},
	{proto: "fcgi", fault: fixtures.FaultHang, class: "timeout", msg: "timeout"},
	{proto: "fcgi", fault: fixtures.FaultReset, class: "receive", msg: "reset|closed with no response"},
	{proto: "fcgi", fault: fixtures.FaultDrip, class: "timeout", msg: "timeout", timeout: 0.15},
	{proto: "fcgi", fault: fixtures.FaultDrip, class: "", timeout: 5},
	{proto: "fcgi", fault: fixtures.FaultOverloaded, class: "protocol", msg: "END_REQUEST OVERLOADED"},
	{proto: "fcgi", fault: fixtures.FaultCantMpx, class: "protocol", msg: "END_REQUEST CANT_MPX_CONN"},
	{proto: "fcgi", fault: fixtures.FaultTrailingJunk, class: ""}, // and TestUnsolicitedBytesBench
	// fixtures.FaultHuge: TestFaultHugeStdout.
	{proto: "http", fault: fixtures.FaultBadStatus, class: "protocol", msg: "bad status code"},
	{proto: "http", fault: fixtures.FaultShortBody, class: "receive", msg: `closed in the body \(60 of 110 bytes\)`},
	{proto: "http", fault: fixtures.FaultReset, class: "receive", msg: "reset|closed before any response byte"},
	{proto: "http", fault: fixtures.FaultHang, class: "timeout", msg: "timeout"},
	{proto: "http", fault: fixtures.FaultGarbage, class: "protocol", msg: "not an HTTP response"},
	{proto: "http", fault: fixtures.FaultHugeHeader, class: "protocol", msg: "over 64 KiB"},
	{proto: "http", fault: fixtures.FaultChunkedBadSize, class: "protocol", msg: "bad chunk size"},
	{proto: "http", fault: fixtures.FaultChunkedBadEnd, class: "protocol", msg: "not followed by CRLF"},
	{proto: "http", fault: fixtures.FaultChunkedCut, class: "receive", msg: "closed in the chunked body"},
	{proto: "http", fault: fixtures.FaultLengthChange, class: "length"},
	{proto: "http", fault: fixtures.FaultTrailingJunk, class: ""},
}

func TestFaultCasesCoverAll(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, f := range fixtures.Faults(proto) {
			found := f.Name == fixtures.FaultHuge && proto == fixtures.ProtoFCGI
			for _, c := range faultCases {
				found = found || (c.proto == proto && c.fault == f.Name)
			}
			if !found {
				t.Errorf("no test case for %s fault %q", proto, f.Name)
			}
			if err := fixtures.ValidFault(proto, f.Name); err != nil {
				t.Error(err)
			}
		}
	}
}

// rawRow is one line of the run's raw CSV (execute.Options.Raw, bench's
// --raw).
type rawRow struct {
	totalMs float64
	class   string
}

func parseRawRows(t *testing.T, b []byte) []rawRow {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("raw CSV: %v (%d lines)", err, len(recs))
	}
	var rows []rawRow
	for _, r := range recs[1:] {
		ms, err := strconv.ParseFloat(r[4], 64)
		if err != nil {
			t.Fatalf("raw row %q: %v", r, err)
		}
		rows = append(rows, rawRow{ms, r[7]})
	}
	return rows
}

// failureCount returns the failures of the named class.
func failureCount(f stats.Failures, class string) int64 {
	switch class {
	case "connect":
		return f.Connect
	case "receive":
		return f.Receive
	case "length":
		return f.Length
	case "exceptions":
		return f.Exceptions
	case "timeout":
		return f.Timeout
	case "protocol":
		return f.Protocol
	}
	return 0
}

var failureClassNames = []string{"connect", "receive", "length", "exceptions", "timeout", "protocol"}

// faultRun runs load l against srv as bench does, the raw rows kept, and
// returns the summary, the raw rows and the wall time.
func faultRun(t *testing.T, srv *fixtures.Server, l benchLoad) (stats.Summary, []rawRow, time.Duration) {
	t.Helper()
	var raw bytes.Buffer
	start := time.Now()
	run := runBenchPlan(t, context.Background(), l.options(srv.URL("/x")), execute.Options{Quiet: true, Raw: &raw, Observe: true})
	wall := time.Since(start)
	return run.Summary, parseRawRows(t, raw.Bytes()), wall
}

// checkAccounting checks the identity complete + failed = n (Length
// failures counting in both), the raw rows and the time bounds: no
// request outlives the timeout by more than a second, and the run ends
// within ceil(n/c) × timeout plus a second.
func checkAccounting(t *testing.T, s stats.Summary, rows []rawRow, wall time.Duration, n, c int, timeout float64) {
	t.Helper()
	if got := s.Complete + s.Failed - s.Failures.Length; got != int64(n) {
		t.Errorf("complete %d + failed %d - length %d = %d, want %d", s.Complete, s.Failed, s.Failures.Length, got, n)
	}
	var sum int64
	for _, cl := range failureClassNames {
		sum += failureCount(s.Failures, cl)
	}
	if sum != s.Failed {
		t.Errorf("failures %+v do not add up to %d", s.Failures, s.Failed)
	}
	if len(rows) != n {
		t.Errorf("%d raw rows, want %d", len(rows), n)
	}
	for _, r := range rows {
		if r.totalMs > (timeout+1)*1000 {
			t.Errorf("a %s request took %.0f ms with timeout %g s", r.class, r.totalMs, timeout)
		}
	}
	bound := math.Ceil(float64(n)/float64(c))*timeout + 1
	if s.TimeTaken > bound || wall.Seconds() > bound+1 {
		t.Errorf("run took %.2f s (wall %v), bound %.2f s", s.TimeTaken, wall, bound)
	}
}

// TestFaults runs against every fault of the built-in backends, over TCP
// and Unix sockets, with and without keep-alive, the fault on every
// request: each request lands in the fault's class.
func TestFaults(t *testing.T) {
	t.Parallel()
	const n, c = 4, 2
	for _, fc := range faultCases {
		for _, network := range []string{"tcp", "unix"} {
			for _, ka := range []bool{false, true} {
				timeout := fc.runTimeout()
				name := fmt.Sprintf("%s/%s/s=%g/%s/keepalive=%v", fc.proto, fc.fault, timeout, network, ka)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					srv := fixtures.StartTB(t, fc.proto, network, fixtures.Options{BodyBytes: 10, Fault: fc.fault})
					s, rows, wall := faultRun(t, srv, benchLoad{n: n, c: c, timeout: timeout, keepAlive: ka})
					checkAccounting(t, s, rows, wall, n, c, timeout)
					want := int64(n)
					if fc.class == "length" {
						want = n / 2 // the other half has the reference length
					}
					for _, cl := range failureClassNames {
						got := failureCount(s.Failures, cl)
						if cl == fc.class && got != want || cl != fc.class && got != 0 {
							t.Errorf("%s failures %d; failures %+v, want %d %s; samples %v", cl, got, s.Failures, want, fc.class, s.ErrorSamples)
						}
					}
					for _, r := range rows {
						if r.class != fc.class && !(fc.class == "" && r.class == "ok") && !(fc.class == "length" && r.class == "ok") {
							t.Errorf("raw row class %q, want %q", r.class, fc.class)
						}
					}
					if fc.class == "" || fc.class == "length" {
						if s.Complete != n {
							t.Errorf("complete %d, want %d", s.Complete, n)
						}
						return
					}
					if s.Complete != 0 {
						t.Errorf("complete %d, want 0", s.Complete)
					}
					re := regexp.MustCompile(fc.msg)
					matched := false
					for _, e := range s.ErrorSamples {
						matched = matched || re.MatchString(e.Message)
					}
					if !matched {
						t.Errorf("no error sample matches %q: %v", fc.msg, s.ErrorSamples)
					}
				})
			}
		}
	}
}

// TestFaultsMixed applies each fault to every third request only, with one
// worker and keep-alive, so that faulty responses follow good ones on kept
// connections: exactly two of six requests fail, except a reset of a kept
// connection before any response byte, which is redialed and counted as a
// reconnect. (Without keep-alive every request has its own connection, as
// in TestFaults.)
func TestFaultsMixed(t *testing.T) {
	t.Parallel()
	const n, every = 6, 3
	for _, fc := range faultCases {
		if fc.class == "" {
			continue
		}
		for _, network := range []string{"tcp", "unix"} {
			for _, ka := range []bool{true} {
				timeout := fc.runTimeout()
				t.Run(fmt.Sprintf("%s/%s/%s/keepalive=%v", fc.proto, fc.fault, network, ka), func(t *testing.T) {
					t.Parallel()
					srv := fixtures.StartTB(t, fc.proto, network, fixtures.Options{BodyBytes: 10, Fault: fc.fault, FaultEvery: every})
					s, rows, wall := faultRun(t, srv, benchLoad{n: n, c: 1, timeout: timeout, keepAlive: ka})
					checkAccounting(t, s, rows, wall, n, 1, timeout)
					want, reconnects := int64(n/every), int64(0)
					if fc.fault == fixtures.FaultReset && ka {
						want, reconnects = 0, n/every
					}
					if got := failureCount(s.Failures, fc.class); got != want || s.Failed-s.Failures.Length != want-failureCount(s.Failures, "length") {
						t.Errorf("%d %s failures, want %d; failures %+v %v", got, fc.class, want, s.Failures, s.ErrorSamples)
					}
					if s.Reconnects != reconnects {
						t.Errorf("%d reconnects, want %d", s.Reconnects, reconnects)
					}
				})
			}
		}
	}
}

// TestFaultHugeStdout reads a 300 MiB STDOUT stream per request, twice on
// one kept connection, once without keep-alive, over TCP and Unix sockets:
// the counts are exact and the client allocates next to nothing while
// reading it (the body is counted and discarded).
func TestFaultHugeStdout(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 1.8 GB")
	}
	for _, network := range []string{"tcp", "unix"} {
		for _, ka := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/keepalive=%v", network, ka), func(t *testing.T) {
				srv := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{Fault: fixtures.FaultHuge})
				n := 1
				if ka {
					n = 2
				}
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				s, rows, wall := faultRun(t, srv, benchLoad{n: n, c: 1, timeout: 60, keepAlive: ka})
				runtime.ReadMemStats(&after)
				checkAccounting(t, s, rows, wall, n, 1, 60)
				if s.Complete != int64(n) || s.Failed != 0 || s.HTMLTransferred != int64(n)*fixtures.HugeBytes || s.TotalTransferred <= s.HTMLTransferred {
					t.Errorf("complete %d failed %d html %d total %d; %v", s.Complete, s.Failed, s.HTMLTransferred, s.TotalTransferred, s.ErrorSamples)
				}
				if ka && s.KeepAliveRequests != 2 {
					t.Errorf("%d keep-alive requests, want 2", s.KeepAliveRequests)
				}
				// The whole run (recorder, summary) allocates about 10
				// MiB; holding 300 MiB of body would show. TotalAlloc
				// counts the whole test process, where goroutines of
				// earlier tests may still allocate (35 MiB was seen in a
				// full run), so the bound is well above the run's own
				// and well below one body.
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 128<<20 {
					t.Errorf("the run allocated %d MiB for %d MiB of body", grew>>20, n*fixtures.HugeBytes>>20)
				}
				t.Logf("%v, allocated %d KiB, heap in use %d KiB", wall, (after.TotalAlloc-before.TotalAlloc)>>10, after.HeapInuse>>10)
			})
		}
	}
}

// TestConnectionRealities: conditions of the connection rather than of
// the response are counted as Connect failures and named in the run's
// notes. (The file limit met mid-run is in cmd/backbench: it needs a
// process started under ulimit -n.)
func TestConnectionRealities(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		t.Run(proto+"/unix backlog full", func(t *testing.T) { checkBacklogFull(t, proto) })
	}
	t.Run("http/tcp refused mid-run", func(t *testing.T) {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Delay: 5 * time.Millisecond})
		s := runBenchPlan(t, context.Background(), benchLoad{n: 2000, c: 2, timeout: 1}.options(srv.URL("/")),
			execute.Options{Quiet: true, Observe: true, Started: closeAfterRequests(srv, 10)}).Summary
		if s.Complete < 1 || s.Failures.Connect < 1 || s.Complete+s.Failed != 2000 {
			t.Errorf("complete %d failures %+v", s.Complete, s.Failures)
		}
		if !runNotesHave(s.Notes, "refused") || !errorSamplesHave(s.ErrorSamples, "connection refused") {
			t.Errorf("notes %q samples %v: no word of refused connections", s.Notes, s.ErrorSamples)
		}
	})
}

// closeAfterRequests is an execute.Options.Started that closes srv once
// n requests of the run have finished: the server goes away mid-run
// whatever the machine's speed (a timer could fire before the first
// request on a loaded machine).
func closeAfterRequests(srv *fixtures.Server, n int64) func(done func() int64) {
	return func(done func() int64) {
		go func() {
			for done() < n {
				time.Sleep(time.Millisecond)
			}
			srv.Close()
		}()
	}
}

// checkBacklogFull runs against a Unix listener with a backlog of 1 that
// never accepts: once two connections wait, connect fails at once with
// EAGAIN, a Connect failure named in the notes.
func checkBacklogFull(t *testing.T, proto string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "b.sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 1); err != nil {
		t.Fatal(err)
	}
	const n = 6
	s := runBenchPlan(t, context.Background(), benchLoad{n: n, c: n, timeout: 0.3}.options(proto+"://unix:"+sock+":/x"),
		execute.Options{Quiet: true, Observe: true}).Summary
	if s.Failures.Connect < n-2 || s.Failures.Connect+s.Failures.Timeout != n || s.Complete != 0 {
		t.Errorf("failures %+v, want at least %d connect and the rest timeouts", s.Failures, n-2)
	}
	if !runNotesHave(s.Notes, "EAGAIN") || !errorSamplesHave(s.ErrorSamples, "backlog full") {
		t.Errorf("notes %q samples %v: no word of the full backlog", s.Notes, s.ErrorSamples)
	}
}

// runNotesHave says whether one of notes contains word.
func runNotesHave(notes []string, word string) bool {
	for _, n := range notes {
		if strings.Contains(n, word) {
			return true
		}
	}
	return false
}

// errorSamplesHave says whether one of the error samples contains word.
func errorSamplesHave(samples []stats.ErrorSample, word string) bool {
	for _, e := range samples {
		if strings.Contains(e.Message, word) {
			return true
		}
	}
	return false
}
