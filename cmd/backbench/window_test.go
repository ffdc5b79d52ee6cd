package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
)

// fragileFCGI starts a FastCGI backend of 50 ms requests that exits when a
// connection is closed after a request began and before its END_REQUEST,
// as Ruby's fcgi.rb does.
func fragileFCGI(t *testing.T, network string) *fixtures.Server {
	return fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{Delay: 50 * time.Millisecond,
		Behaviour: fixtures.Behaviour{DieOnCutRequest: true}})
}

// alive fails the test when srv has died.
func alive(t *testing.T, srv *fixtures.Server, after string) {
	t.Helper()
	time.Sleep(100 * time.Millisecond) // a close at the end would be seen by now
	if r := srv.DeathReason(); r != "" {
		t.Fatalf("the backend died after %s: %s", after, r)
	}
}

// TestTimedEndKeepsFragileBackend: the end of a time limit sends no new
// request and lets the requests in flight finish, so a backend that dies
// when a begun request's connection is closed survives a timed bench run
// (closed and open model, stages), 20 timed runs of a sweep (half a
// second each) with their warm-ups, and capacity searches of short steps, open and closed.
func TestTimedEndKeepsFragileBackend(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		for _, extra := range [][]string{nil, {"-k"}, {"--rate", "40"}, {"--stages", "0.5:4,0.5:1"}} {
			t.Run("bench/"+network+strings.Join(extra, ""), func(t *testing.T) {
				srv := fragileFCGI(t, network)
				s := benchJSON(t, append([]string{"-t", "1", "-c", "4", srv.URL("/x")}, extra...)...)
				alive(t, srv, "bench -t 1 -c 4 "+strings.Join(extra, " "))
				if s.Failed != 0 || s.Complete < 5 {
					t.Errorf("complete %d failed %d: %v", s.Complete, s.Failed, s.ErrorSamples)
				}
				// The requests in flight at the deadline are drained: at
				// most -c, and in the closed model at one level some
				// always are (50 ms requests back to back). The rate is
				// the window's: complete / the time limit.
				if s.Drained > 4 || (len(extra) < 2 && s.Drained == 0) {
					t.Errorf("drained %d", s.Drained)
				}
				if s.TimeTaken < 1 || math.Abs(s.RequestsPerSecond-float64(s.Complete)/s.TimeTaken) > 0.01 {
					t.Errorf("time taken %g s, %g req/s for %d complete", s.TimeTaken, s.RequestsPerSecond, s.Complete)
				}
			})
		}
	}
	t.Run("sweep", func(t *testing.T) {
		srv := fragileFCGI(t, "unix")
		code, out, errs := runMain(t, context.Background(), "sweep", "-q", "--out", t.TempDir(), "--repeat", "5", "-t", "0.5",
			"-c", "1,2,3,4", srv.URL("/x"))
		alive(t, srv, "sweep --repeat 5 -t 0.5 -c 1,2,3,4")
		if code != 0 {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
	})
	for _, model := range []string{"open", "closed"} {
		t.Run("capacity/"+model, func(t *testing.T) {
			srv := fragileFCGI(t, "unix")
			dir := t.TempDir()
			args := []string{"capacity", "-q", "-t", "0.3", "--warmup", "0.1", "--confirm", "0", "--slo", "p99<=1s",
				"--model", model, "--out", dir}
			if model == "open" {
				args = append(args, "--start", "20", "--max", "160")
			} else {
				args = append(args, "--start", "1", "--max", "8")
			}
			code, out, errs := runMain(t, context.Background(), append(args, srv.URL("/x"))...)
			alive(t, srv, "capacity -t 0.3 --model "+model)
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, errs)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "capacity.json")); err != nil || !strings.Contains(string(b), `"capacity_`) {
				t.Errorf("capacity.json: %v %.300s", err, b)
			}
		})
	}
}
