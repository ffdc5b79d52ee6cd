package execute_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/testnet"
)

// TestClusterOfSerialWorkers: five serial 10 ms workers reached without a
// balancer (upstreams, round-robin) give about five times one worker's
// throughput, and the per-address lines add up to the totals.
func TestClusterOfSerialWorkers(t *testing.T) {
	opts := fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 10 * time.Millisecond, BodyBytes: 5}
	var upstreams []string
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
		upstreams = append(upstreams, s.Network+":"+s.Addr)
	}
	// A serial worker serves one kept connection at a time: one worker
	// gets one connection, five get five (round-robin, one each).
	var five stats.Summary
	execSpeedRetries(t, func() []string {
		one := execBenchSummary(t, first.URL("/"), func(o *plan.Options) { o.KeepAlive, o.Requests, o.Concurrency = true, 60, 1 })
		five = execBenchSummary(t, first.URL("/"), func(o *plan.Options) {
			o.Upstreams, o.KeepAlive, o.Requests, o.Concurrency = upstreams, true, 300, 5
		})
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

// clusterRun runs the plan of -n n -c c over upstreams against url (as
// bench -q), and returns the run and what it wrote on stderr.
func clusterRun(t *testing.T, url string, upstreams []string, n int64, c int) (*stats.Run, string, error) {
	t.Helper()
	o := plan.Defaults(url)
	o.Upstreams, o.Balance, o.Requests, o.RequestsSet, o.Concurrency, o.ConcurrencySet = upstreams, "round-robin", n, true, c, true
	l, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	run, err := execute.Run(context.Background(), l.Plan, execute.Options{Stderr: &stderr, Quiet: true, Observe: true})
	return run, stderr.String(), err
}

// TestClusterDeadAddress: one dead address shows as its own connect
// failures, after a warning, and the run goes on at the others' pace; all
// dead, the target cannot be reached at all.
func TestClusterDeadAddress(t *testing.T) {
	dead := testnet.DeadTCP(t, "127.0.0.1")
	var upstreams []string
	for range 3 {
		s := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
		upstreams = append(upstreams, "tcp:"+s.Addr)
	}
	run, errs, err := clusterRun(t, "http://"+dead+"/", append(upstreams, "tcp:"+dead), 400, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errs, "warning: upstream tcp:"+dead) {
		t.Errorf("no warning for the dead upstream: %q", errs)
	}
	s := run.Summary
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
	_, _, err = clusterRun(t, "http://"+dead+"/", []string{"tcp:" + dead}, 1, 1)
	var ue *execute.UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("all dead: %v", err)
	}
}
