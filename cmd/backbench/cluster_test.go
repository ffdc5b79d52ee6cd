package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/stats"
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
	var five stats.Summary
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

func decodeSummary(t *testing.T, out string) stats.Summary {
	t.Helper()
	var s stats.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	return s
}
