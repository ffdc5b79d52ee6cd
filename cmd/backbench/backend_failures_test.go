package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/sockets"
)

// dialEmpty opens a connection to srv and closes it without a byte.
func dialEmpty(t *testing.T, srv *fixtures.Server) {
	t.Helper()
	c, err := net.Dial(srv.Network, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// waitDied waits (up to 5 s) for srv to die and reports whether it did.
func waitDied(srv *fixtures.Server) bool {
	select {
	case <-srv.Died():
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

// TestBenchDieOnEmptyConn: a backend that exits on a connection closed
// without a request (Ruby's fcgi.rb) serves a whole bench run, with and
// without keep-alive, and is alive afterwards; the same backend dies on
// one empty connection, and bench then exits 1 with one error line.
func TestBenchDieOnEmptyConn(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, network := range []string{"tcp", "unix"} {
			t.Run(proto+"/"+network, func(t *testing.T) {
				srv := fixtures.StartTB(t, proto, network, fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial},
					Behaviour: fixtures.Behaviour{DieOnEmptyConn: true, KeepConn: fixtures.KeepConnIgnore}})
				for _, ka := range []bool{false, true} {
					args := []string{"-n", "60", "-c", "3", srv.URL("/x")}
					if ka {
						args = append(args, "-k")
					}
					s := benchJSON(t, args...)
					if s.Complete != 60 || s.Failed != 0 || s.BackendLost != nil {
						t.Fatalf("-k %v: complete %d failed %d lost %v errors %v", ka, s.Complete, s.Failed, s.BackendLost, s.ErrorSamples)
					}
					if r := srv.DeathReason(); r != "" {
						t.Fatalf("-k %v: the backend died: %s", ka, r)
					}
				}
				dialEmpty(t, srv)
				if !waitDied(srv) {
					t.Fatal("the switch did not take the backend down")
				}
				code, out, errs := runMain(t, context.Background(), "bench", "-n", "5", srv.URL("/x"))
				if code != exitUnreachable || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
					t.Errorf("after its death: exit %d, stdout %q, stderr %q", code, out, errs)
				}
			})
		}
	}
}

// TestBenchBackendLost: a backend that exits after 100 requests is reported
// on one line and in JSON, with the count and the moment; the run's other
// requests are connect failures.
func TestBenchBackendLost(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			start := func() *fixtures.Server {
				return fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{Behaviour: fixtures.Behaviour{ExitAfter: 100}})
			}
			s := benchJSON(t, "-n", "200", start().URL("/x"))
			want := map[string]string{"tcp": "connection refused", "unix": "no such Unix socket"}[network]
			bl := s.BackendLost
			if bl == nil || bl.AfterRequests != 100 || bl.AtSeconds <= 0 || bl.AtSeconds > s.TimeTaken || bl.Error != want {
				t.Fatalf("backend_lost %+v, want after 100 requests: %s", bl, want)
			}
			if s.Complete != 100 || s.Failures.Connect != 100 {
				t.Errorf("complete %d, connect failures %d", s.Complete, s.Failures.Connect)
			}
			code, out, errs := runMain(t, context.Background(), "bench", "-q", "-n", "150", start().URL("/x"))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if !strings.Contains(out, "Backend lost:           the backend stopped accepting connections after 100 completed requests, at ") ||
				!strings.Contains(out, " s: "+want+"\n") {
				t.Errorf("no backend-lost line in the report:\n%s", out)
			}
		})
	}
	// A healthy run says nothing and has "backend_lost": null.
	code, out, _ := runMain(t, context.Background(), "bench", "-q", "--format", "json", "-n", "5",
		fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{}).URL("/"))
	if code != 0 || !strings.Contains(out, `"backend_lost": null`) {
		t.Errorf("exit %d, no null backend_lost:\n%s", code, out)
	}
}

// TestSweepBackendLost: the series whose backend exits stops with that
// reason; the other series runs every level.
func TestSweepBackendLost(t *testing.T) {
	good := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{})
	dying := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{Behaviour: fixtures.Behaviour{ExitAfter: 30}})
	code, out, errs, dir := sweepOut(t, "-q", "-n", "20", "-c", "1,2,4", "good="+good.URL("/x"), "dying="+dying.URL("/x"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sw, _ := readSweep(t, dir)
	g, d := sw.Series[0], sw.Series[1]
	if len(g.Levels) != 3 || g.Stop != nil {
		t.Errorf("good series: %d levels, stop %+v", len(g.Levels), g.Stop)
	}
	// 30 requests: level 1 and its warm-up, then part of level 2.
	if d.Stop == nil || d.Stop.Concurrency != 2 || len(d.Levels) != 2 ||
		!strings.Contains(d.Stop.Reason, "the backend stopped accepting connections after ") {
		t.Fatalf("dying series: %d levels, stop %+v", len(d.Levels), d.Stop)
	}
	if bl := d.Levels[1].BackendLost; bl == nil || bl.AfterRequests < 1 || bl.AfterRequests >= 20 || bl.Error != "connection refused" {
		t.Errorf("level 2: backend_lost %+v", bl)
	}
	if !strings.Contains(out, "stopped accepting connections") {
		t.Errorf("the table does not say why the series stopped:\n%s", out)
	}
}

// TestBenchIgnoresNoClose: against a server that keeps the connection after
// Connection: close and does not say it will close (uWSGI's
// --http11-socket), bench without -k closes at once after each response:
// no request waits behind a connection held open for the server's close.
// Against the same server when it says Connection: close, the client still
// lets it close first.
func TestBenchIgnoresNoClose(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			srv := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelPrefork, N: 1},
				Behaviour: fixtures.Behaviour{IgnoreClose: true}})
			s := benchJSON(t, "-n", "40", "-c", "2", srv.URL("/"))
			if s.Complete != 40 || s.Failed != 0 {
				t.Fatalf("complete %d failed %d %v", s.Complete, s.Failed, s.ErrorSamples)
			}
			// With the old wait, every request behind one whose
			// connection was held took LingerGrace or more: the median
			// did. (Not the longest: one request stalled by a loaded
			// machine took 100.9 ms under go test -count=3.)
			if median := s.ConnectionTimes.Total.Median; median >= float64(sockets.LingerGrace/time.Millisecond)/2 {
				t.Errorf("median request %.1f ms: connections were held for the server's close", median)
			}
		})
	}
}
