package proberun_test

// Probes of real backends started by scripts/backends.sh
// (realbackend.StartScripted), over TCP and Unix sockets: every verdict
// and the advice's phrases. php-fpm, fcgiwrap, Thin and Ruby's two
// FastCGI servers run here, in `make test` and CI (where a missing one
// fails the test); the others are in realbackends_more_test.go, under
// `make integration`. The runs against the same backends are in
// internal/execute.
//
// The probe's request is built with internal/plan (above this package),
// as backbench probe builds it from its flags. The probes reach no
// engine: they run once, with the default one.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/proberun"
	"github.com/backbench/backbench/internal/realbackend"
)

// realProbeWant is what a backend's probe finds, the same over TCP and
// Unix sockets (see docs/recipes.md).
type realProbeWant struct {
	name string
	// verdicts are the checks' verdicts by name.
	verdicts map[string]string
	// summary are phrases the probe's summary must hold.
	summary []string
}

// realProbeCI are the backends that CI installs and runs.
var realProbeCI = []realProbeWant{
	{name: "php-fpm",
		verdicts: map[string]string{"get_values": "answered", "keep_conn": "honored",
			"max_requests_per_connection": "not reached", "multiplexing": "lost", "unknown_role": "closed",
			"roles": "served", "unknown_type": "closed", "abort": "END_REQUEST", "params": "not served", "response": "answered"},
		summary: []string{"-k is meaningful", "extra connections wait for the whole run", "lost silently"}},
	{name: "fcgiwrap",
		verdicts: map[string]string{"get_values": "answered", "keep_conn": "honored",
			"max_requests_per_connection": "not reached", "multiplexing": "rejected", "unknown_role": "closed",
			"roles": "served", "unknown_type": "UNKNOWN_TYPE", "abort": "END_REQUEST", "params": "served", "response": "answered"},
		summary: []string{"-k is meaningful", "libfcgi answers FCGI_MAX_CONNS=1 in every worker"}},
	{name: "thin",
		verdicts: map[string]string{"http11_persistent": "honored", "http10_keep_alive": "honored",
			"max_requests_per_connection": "not reached", "idle_timeout_seconds": "not reached",
			"pipelining": "first only", "framing": "content-length", "server": "present"},
		summary: []string{"-k is meaningful over HTTP/1.1", "ab -k works", "pipelined requests gets no answer"}},
}

// realProbeRuby are ruby-fcgi (fcgi.rb under spawn-fcgi) and rack-fcgi
// (rackup -s fastcgi, on fcgi.rb too), as they behaved on Debian
// bookworm: fcgi.rb exits on FCGI_GET_VALUES asking for any name, and the
// probe says so.
var realProbeRuby = func() []realProbeWant {
	verdicts := map[string]string{"response": "answered", "keep_conn": "ignored", "params": "served",
		"max_requests_per_connection": "measured", "get_values_empty": "answered", "get_values": "closed",
		"unknown_type": "skipped", "unknown_role": "skipped", "roles": "skipped", "multiplexing": "skipped", "abort": "skipped"}
	summary := []string{"-k changes nothing",
		"the server crashed on get_values: a frontend that sends FCGI_GET_VALUES would take it down"}
	return []realProbeWant{{"ruby-fcgi", verdicts, summary}, {"rack-fcgi", verdicts, summary}}
}()

// realProbeOnce skips the test in make test's second pass
// (BACKBENCH_ENGINE set): a probe reaches no engine.
func realProbeOnce(t *testing.T) {
	t.Helper()
	if os.Getenv(execute.EngineEnv) != "" {
		t.Skip("runs once: a probe reaches no engine")
	}
}

// TestRealBackendsProbe probes php-fpm, fcgiwrap and Thin.
func TestRealBackendsProbe(t *testing.T) {
	realProbeOnce(t)
	for _, w := range realProbeCI {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			b := realbackend.StartScripted(t, w.name, true)
			for _, kind := range []string{"tcp", "unix"} {
				t.Run(kind, func(t *testing.T) { realProbe(t, b, w, kind) })
			}
		})
	}
}

// TestRealRubyFCGIProbe probes each listener of both Ruby servers, which
// takes it down on get_values, and says so.
func TestRealRubyFCGIProbe(t *testing.T) {
	realProbeOnce(t)
	for _, w := range realProbeRuby {
		t.Run(w.name, func(t *testing.T) {
			b := realbackend.StartScripted(t, w.name, true)
			for _, kind := range []string{"tcp", "unix"} {
				t.Run(kind, func(t *testing.T) { realProbe(t, b, w, kind) })
			}
		})
	}
}

// realProbe probes the small endpoint as backbench probe --format json -s
// 5 --idle-max 2 --max-requests 50 does and checks every verdict and the
// summary's phrases in the JSON.
func realProbe(t *testing.T, b *realbackend.Scripted, w realProbeWant, kind string) {
	t.Helper()
	url := b.URL(kind, "small")
	targets, err := proberun.Targets(url)
	if err != nil {
		t.Fatal(err)
	}
	o := proberun.Options{Timeout: 5 * time.Second, IdleMax: 2 * time.Second, MaxRequests: 50, JSON: true}
	if o.Protocol, err = plan.Protocol(targets[0]); err != nil {
		t.Fatal(err)
	}
	docRoot := ""
	if strings.HasPrefix(url, "fcgi://") {
		docRoot = b.DocRoot
	}
	if o.Headers, o.Request, err = plan.Request(o.Protocol, nil, nil, docRoot, false); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := proberun.Run(context.Background(), &out, url, targets, o); err != nil {
		t.Fatalf("probe %s: %v", url, err)
	}
	var rep map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out.String())
	}
	for key, want := range w.verdicts {
		var c struct {
			Verdict  string `json:"verdict"`
			Evidence string `json:"evidence"`
		}
		if err := json.Unmarshal(rep[key], &c); err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		if c.Verdict != want {
			t.Errorf("%s: %q (%s), want %q", key, c.Verdict, c.Evidence, want)
		}
	}
	var summary []string
	if err := json.Unmarshal(rep["summary"], &summary); err != nil {
		t.Fatalf("summary: %v", err)
	}
	all := strings.Join(summary, "\n")
	for _, phrase := range w.summary {
		if !strings.Contains(all, phrase) {
			t.Errorf("summary lacks %q:\n%s", phrase, all)
		}
	}
}
