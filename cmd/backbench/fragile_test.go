package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
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

// TestServeGetValuesDie: --fcgi-get-values die answers a GET_VALUES that
// asks for nothing and goes down on one that asks for a name.
func TestServeGetValuesDie(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{Behaviour: fixtures.Behaviour{GetValues: fixtures.ReplyDie}})
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	empty := []byte{1, 9, 0, 0, 0, 0, 0, 0}
	if _, err := c.Write(empty); err != nil {
		t.Fatal(err)
	}
	var h [8]byte
	if _, err := c.Read(h[:]); err != nil || h[1] != 10 || h[4] != 0 || h[5] != 0 {
		t.Fatalf("empty GET_VALUES: %v %v, want an empty GET_VALUES_RESULT", h, err)
	}
	named := []byte{1, 9, 0, 0, 0, 16, 0, 0, 14, 0}
	named = append(named, "FCGI_MAX_CONNS"...)
	if _, err := c.Write(named); err != nil {
		t.Fatal(err)
	}
	if !waitDied(srv) {
		t.Fatal("a GET_VALUES asking for a name did not take the backend down")
	}
}

// TestProbeFragileServer: a server that dies on a GET_VALUES asking for a
// name (and on an empty connection) answers the ordinary checks and the
// empty GET_VALUES first; the probe names the check that took it down and
// skips the rest. --only and --skip choose the checks.
func TestProbeFragileServer(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			srv := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial},
				Behaviour: fixtures.Behaviour{GetValues: fixtures.ReplyDie, DieOnEmptyConn: true, KeepConn: fixtures.KeepConnIgnore}})
			code, out, errs := runMain(t, context.Background(), "probe", "-s", "2", srv.URL("/x"))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, want := range []string{
				"response                     answered",
				"keep_conn                    ignored",
				"get_values_empty             answered",
				"unknown_type                 skipped          the server stopped accepting connections after get_values",
				"abort                        skipped",
				"the server crashed on get_values: a frontend that sends FCGI_GET_VALUES would take it down",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in:\n%s", want, out)
				}
			}
			if strings.Contains(out, "no ordinary request was answered") {
				t.Errorf("the summary blames the URL:\n%s", out)
			}
		})
	}
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{Behaviour: fixtures.Behaviour{GetValues: fixtures.ReplyDie}})
	code, out, errs := runMain(t, context.Background(), "probe", "--skip", "get_values", "--only", "response,get_values,abort", srv.URL("/x"))
	if code != 0 || !strings.Contains(out, "get_values                   skipped          not selected") ||
		!strings.Contains(out, "abort                        END_REQUEST") || !strings.Contains(out, "keep_conn                    skipped") {
		t.Errorf("exit %d %s:\n%s", code, errs, out)
	}
	if r := srv.DeathReason(); r != "" {
		t.Errorf("died: %s", r)
	}
	code, _, errs = runMain(t, context.Background(), "probe", "--only", "nosuch", srv.URL("/x"))
	if code != exitUsage || !strings.Contains(errs, `unknown check "nosuch"`) {
		t.Errorf("--only nosuch: exit %d, %s", code, errs)
	}
}

// TestServeExitAfter: `backbench serve --exit-after 3` answers 3 requests
// and exits with one error line saying so; bench reports the loss.
func TestServeExitAfter(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		done <- Main(ctx, nil, []string{"serve", "--protocol", "fcgi", "--listen", "unix:" + sock, "--exit-after", "3"}, &out, &errb)
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if fi, err := os.Stat(sock); err == nil && fi.Mode().Type() == os.ModeSocket {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("serve did not listen")
		}
	}
	s := benchJSON(t, "-n", "6", "fcgi://unix:"+sock+":/x")
	if s.Complete != 3 || s.BackendLost == nil || s.BackendLost.AfterRequests != 3 {
		t.Errorf("complete %d, lost %+v", s.Complete, s.BackendLost)
	}
	if code := <-done; code != 1 || !strings.Contains(errb.String(), "exited after 3 requests") ||
		strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
		t.Errorf("serve: exit %d, stderr %q", code, errb.String())
	}
	code, _, errs := runMain(t, context.Background(), "serve", "--listen", "unix:"+sock, "--exit-after", "-1")
	if code != exitUsage || !strings.Contains(errs, "--exit-after") {
		t.Errorf("--exit-after -1: exit %d, %q", code, errs)
	}
}

// TestProbeHTTPOnlySkip: --only and --skip choose the HTTP checks too.
func TestProbeHTTPOnlySkip(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	code, out, errs := runMain(t, context.Background(), "probe", "--only", "http11_persistent,server", "--skip", "server", srv.URL("/"))
	if code != 0 || !strings.Contains(out, "http11_persistent            honored") ||
		!strings.Contains(out, "server                       skipped          not selected") ||
		!strings.Contains(out, "idle_timeout_seconds         skipped") {
		t.Errorf("exit %d %s:\n%s", code, errs, out)
	}
	code, _, errs = runMain(t, context.Background(), "probe", "--skip", "abort", srv.URL("/"))
	if code != exitUsage || !strings.Contains(errs, `unknown check "abort"`) {
		t.Errorf("--skip abort on HTTP: exit %d, %s", code, errs)
	}
}
