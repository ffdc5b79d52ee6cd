package execute_test

// Runs against real backends started by scripts/backends.sh
// (realbackend.StartScripted): with and without keep-alive, over TCP and
// Unix sockets, both bodies and the slow endpoint. php-fpm, fcgiwrap,
// Thin and Ruby's two FastCGI servers run here, in `make test` and CI
// (where a missing one fails the test); the others are in
// realbackends_more_test.go, under `make integration`. Their probes are
// in internal/proberun, a sweep over them in internal/sweep.
//
// The plans are built with internal/plan (above this package), as bench
// builds them from its flags.

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/realbackend"
	"github.com/backbench/backbench/internal/stats"
)

// realBenchWant is how a real backend keeps connections, learnt by
// probing it (see docs/recipes.md).
type realBenchWant struct {
	name string
	// keepAlive: the server keeps the connection with -k (FastCGI:
	// FCGI_KEEP_CONN; HTTP/1.1), and http10KeepAlive with --http1.0 -k.
	keepAlive, http10KeepAlive bool
}

// realBenchCI are the backends that CI installs and runs.
var realBenchCI = []realBenchWant{
	{name: "php-fpm", keepAlive: true},
	{name: "fcgiwrap", keepAlive: true},
	{name: "thin", keepAlive: true, http10KeepAlive: true},
}

// realBenchLoad is one bench run's load: -n, -c, -k and --http1.0, with
// -s 10.
type realBenchLoad struct {
	n, c             int
	keepAlive, http1 bool
}

// realBenchRun runs the load l on url, as bench -q --format json runs it
// (a FastCGI target with the backend's document root), and returns the
// run's summary.
func realBenchRun(t *testing.T, b *realbackend.Scripted, url string, l realBenchLoad) stats.Summary {
	t.Helper()
	po := plan.Defaults(url)
	po.Concurrency, po.Requests, po.RequestsSet = l.c, int64(l.n), true
	po.Timeout, po.KeepAlive, po.HTTP10 = 10*time.Second, l.keepAlive, l.http1
	if strings.HasPrefix(url, "fcgi://") {
		po.DocumentRoot = b.DocRoot
	}
	ld, err := po.Build()
	if err != nil {
		t.Fatal(err)
	}
	run, err := execute.Run(context.Background(), ld.Plan, execute.Options{Stderr: io.Discard, Quiet: true, Observe: true, Version: "test"})
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return run.Summary
}

// realNotesHave reports whether a note holds phrase.
func realNotesHave(notes []string, phrase string) bool {
	for _, n := range notes {
		if strings.Contains(n, phrase) {
			return true
		}
	}
	return false
}

// TestRealBackendsBench runs the loads of realBenchBackend against
// php-fpm, fcgiwrap and Thin.
func TestRealBackendsBench(t *testing.T) {
	for _, w := range realBenchCI {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			b := realbackend.StartScripted(t, w.name, true)
			for _, kind := range []string{"tcp", "unix"} {
				t.Run(kind, func(t *testing.T) { realBenchBackend(t, b, w, kind) })
			}
		})
	}
}

// realBenchBackend runs both bodies, with and without keep-alive (and
// HTTP/1.0 for HTTP), and checks the counts, the document length and the
// keep-alive accounting; then the slow endpoint.
func realBenchBackend(t *testing.T, b *realbackend.Scripted, w realBenchWant, kind string) {
	const n = 30
	type mode struct {
		name   string
		ka     bool // -k was asked
		kept   bool // every response leaves the connection open
		http10 bool
	}
	modes := []mode{{"close", false, false, false}, {"keepalive", true, w.keepAlive, false}}
	if strings.HasPrefix(b.URLs[kind], "http") {
		modes = append(modes, mode{"http1.0", false, false, true},
			mode{"http1.0-keepalive", true, w.http10KeepAlive, true})
	}
	for _, body := range []struct {
		endpoint string
		length   int64
	}{{"small", realbackend.ScriptedSmallLen}, {"big", realbackend.ScriptedBigLen}} {
		for _, m := range modes {
			t.Run(body.endpoint+"/"+m.name, func(t *testing.T) {
				s := realBenchRun(t, b, b.URL(kind, body.endpoint), realBenchLoad{n: n, c: 3, keepAlive: m.ka, http1: m.http10})
				if s.Complete != n || s.Failed != 0 || s.Non2xx != 0 {
					t.Fatalf("complete %d failed %d non-2xx %d errors %v notes %v", s.Complete, s.Failed, s.Non2xx, s.ErrorSamples, s.Notes)
				}
				if s.DocumentLength != body.length || s.HTMLTransferred != n*body.length {
					t.Errorf("document length %d, HTML transferred %d; want %d and %d", s.DocumentLength, s.HTMLTransferred, body.length, n*body.length)
				}
				wantKept := int64(0)
				if m.kept {
					wantKept = n
				}
				if s.KeepAliveRequests != wantKept {
					t.Errorf("keep-alive requests %d, want %d (reconnects %d)", s.KeepAliveRequests, wantKept, s.Reconnects)
				}
				if hasNote := realNotesHave(s.Notes, "-k was asked but the server closed"); hasNote != (m.ka && !m.kept) {
					t.Errorf("notes %q: the note on a server that does not keep connections is there: %v, want %v", s.Notes, hasNote, m.ka && !m.kept)
				}
			})
		}
	}
	t.Run("slow", func(t *testing.T) {
		s := realBenchRun(t, b, b.URL(kind, "slow"), realBenchLoad{n: 8, c: 2, keepAlive: true})
		if s.Complete != 8 || s.Failed != 0 || s.DocumentLength != realbackend.ScriptedSmallLen {
			t.Fatalf("complete %d failed %d length %d errors %v", s.Complete, s.Failed, s.DocumentLength, s.ErrorSamples)
		}
		// The endpoint sleeps 20 ms: no request can be quicker.
		if s.ConnectionTimes.Total.Min < realbackend.ScriptedSlowMs-1 {
			t.Errorf("the slow endpoint answered in %v ms, under its %d ms sleep", s.ConnectionTimes.Total.Min, realbackend.ScriptedSlowMs)
		}
	})
}

// TestRealRubyFCGIBench runs both of Ruby's FastCGI servers (ruby-fcgi:
// fcgi.rb under spawn-fcgi; rack-fcgi: rackup -s fastcgi, on fcgi.rb too)
// over TCP and Unix, with and without -k (they ignore FCGI_KEEP_CONN: -k
// runs complete with redials), and checks that every process is still
// alive after the runs (fcgi.rb exits on a connection closed without a
// request). It runs once, with the default engine: FastCGI runs on the
// poller in both of make test's passes.
func TestRealRubyFCGIBench(t *testing.T) {
	if os.Getenv(execute.EngineEnv) != "" {
		t.Skip("runs once, with the default engine: FastCGI runs on the poller in both passes")
	}
	for _, name := range []string{"ruby-fcgi", "rack-fcgi"} {
		t.Run(name, func(t *testing.T) {
			b := realbackend.StartScripted(t, name, true)
			for _, kind := range []string{"tcp", "unix"} {
				t.Run(kind, func(t *testing.T) { realRubyBench(t, b, kind) })
			}
			for _, pid := range b.PIDs {
				if !realbackend.Alive(pid) {
					t.Fatalf("process %d is gone after the bench runs", pid)
				}
			}
		})
	}
}

// realRubyBench runs both bodies with and without -k: every request
// completes, and with -k each connection after a worker's first was
// redialed (the server closed it after its answer), which a note says.
func realRubyBench(t *testing.T, b *realbackend.Scripted, kind string) {
	const n, c = 40, 3
	for _, endpoint := range []string{"small", "big"} {
		for _, ka := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/keepalive=%v", endpoint, ka), func(t *testing.T) {
				s := realBenchRun(t, b, b.URL(kind, endpoint), realBenchLoad{n: n, c: c, keepAlive: ka})
				want := map[string]int64{"small": realbackend.ScriptedSmallLen, "big": realbackend.ScriptedBigLen}[endpoint]
				if s.Complete != n || s.Failed != 0 || s.DocumentLength != want || s.BackendLost != nil {
					t.Fatalf("complete %d failed %d length %d lost %v errors %v", s.Complete, s.Failed, s.DocumentLength, s.BackendLost, s.ErrorSamples)
				}
				if ka && (s.Reconnects < n-c || !realNotesHave(s.Notes, "-k was asked but the server closed")) {
					t.Errorf("-k: %d reconnects, notes %q", s.Reconnects, s.Notes)
				}
			})
		}
	}
}
