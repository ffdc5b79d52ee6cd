package execute_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/sockets"
)

// A backend's failures as a run meets them: a backend that dies on an
// empty connection, one that exits in the middle of a run, one that keeps
// a connection it was asked to close. (bench's exit status and text line
// stay in cmd/backbench.)

// backendFailDialEmpty opens a connection to srv and closes it without a
// byte.
func backendFailDialEmpty(t *testing.T, srv *fixtures.Server) {
	t.Helper()
	c, err := net.Dial(srv.Network, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// backendFailWaitDied waits (up to 5 s) for srv to die and reports
// whether it did.
func backendFailWaitDied(srv *fixtures.Server) bool {
	select {
	case <-srv.Died():
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

// TestRunDieOnEmptyConn: a backend that exits on a connection closed
// without a request (Ruby's fcgi.rb) serves a whole run, with and without
// keep-alive, and is alive afterwards; the same backend dies on one empty
// connection, and a run then cannot reach it.
func TestRunDieOnEmptyConn(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, network := range []string{"tcp", "unix"} {
			t.Run(proto+"/"+network, func(t *testing.T) {
				srv := fixtures.StartTB(t, proto, network, fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial},
					Behaviour: fixtures.Behaviour{DieOnEmptyConn: true, KeepConn: fixtures.KeepConnIgnore}})
				for _, ka := range []bool{false, true} {
					s := execBenchSummary(t, srv.URL("/x"), func(o *plan.Options) { o.Requests, o.Concurrency, o.KeepAlive = 60, 3, ka })
					if s.Complete != 60 || s.Failed != 0 || s.BackendLost != nil {
						t.Fatalf("-k %v: complete %d failed %d lost %v errors %v", ka, s.Complete, s.Failed, s.BackendLost, s.ErrorSamples)
					}
					if r := srv.DeathReason(); r != "" {
						t.Fatalf("-k %v: the backend died: %s", ka, r)
					}
				}
				backendFailDialEmpty(t, srv)
				if !backendFailWaitDied(srv) {
					t.Fatal("the switch did not take the backend down")
				}
				o := plan.Defaults(srv.URL("/x"))
				o.Requests, o.RequestsSet = 5, true
				l, err := o.Build()
				if err != nil {
					t.Fatal(err)
				}
				var ue *execute.UnreachableError
				if _, err := execute.Run(context.Background(), l.Plan, execute.Options{Stderr: io.Discard, Quiet: true}); !errors.As(err, &ue) {
					t.Errorf("after its death: %v, want an UnreachableError", err)
				}
			})
		}
	}
}

// TestRunBackendLost: a backend that exits after 100 requests is recorded
// with the count and the moment; the run's other requests are connect
// failures.
func TestRunBackendLost(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			srv := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{Behaviour: fixtures.Behaviour{ExitAfter: 100}})
			s := execBenchSummary(t, srv.URL("/x"), func(o *plan.Options) { o.Requests = 200 })
			want := map[string]string{"tcp": "connection refused", "unix": "no such Unix socket"}[network]
			bl := s.BackendLost
			if bl == nil || bl.AfterRequests != 100 || bl.AtSeconds <= 0 || bl.AtSeconds > s.TimeTaken || bl.Error != want {
				t.Fatalf("backend_lost %+v, want after 100 requests: %s", bl, want)
			}
			if s.Complete != 100 || s.Failures.Connect != 100 {
				t.Errorf("complete %d, connect failures %d", s.Complete, s.Failures.Connect)
			}
		})
	}
	// A healthy run has none.
	if s := execBenchSummary(t, fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{}).URL("/"),
		func(o *plan.Options) { o.Requests = 5 }); s.BackendLost != nil {
		t.Errorf("healthy run: backend_lost %+v", s.BackendLost)
	}
}

// TestRunIgnoresNoClose: against a server that keeps the connection after
// Connection: close and does not say it will close (uWSGI's
// --http11-socket), a run without keep-alive closes at once after each
// response: no request waits behind a connection held open for the
// server's close. Against the same server when it says Connection: close,
// the client still lets it close first.
func TestRunIgnoresNoClose(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			srv := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelPrefork, N: 1},
				Behaviour: fixtures.Behaviour{IgnoreClose: true}})
			s := execBenchSummary(t, srv.URL("/"), func(o *plan.Options) { o.Requests, o.Concurrency = 40, 2 })
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
