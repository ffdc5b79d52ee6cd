package proberun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/proberun"
	"github.com/backbench/backbench/internal/protocol"
)

// probeChecks probes url as the probe command does with its default
// bounds and --only checks, and returns each check's verdict and
// evidence by name. internal/plan builds the protocol and its request,
// as the command does.
func probeChecks(t *testing.T, url string, checks []string) map[string][2]string {
	t.Helper()
	targets, err := proberun.Targets(url)
	if err != nil {
		t.Fatal(err)
	}
	o := proberun.Options{Timeout: 5 * time.Second, IdleMax: 10 * time.Second, MaxRequests: 1000, Only: checks}
	if o.Protocol, err = plan.Protocol(targets[0]); err != nil {
		t.Fatal(err)
	}
	if o.Headers, o.Request, err = plan.Request(o.Protocol, nil, nil, "", false); err != nil {
		t.Fatal(err)
	}
	if sel, ok := o.Protocol.(protocol.Prober); ok {
		if err := sel.SelectChecks(checks, nil); err != nil {
			t.Fatal(err)
		}
	}
	r, err := proberun.Probe(context.Background(), targets[0], o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	for _, l := range r.Lines {
		got[l.Name] = [2]string{l.Verdict, l.Evidence}
	}
	return got
}

// TestUnsolicitedBytesProbe probes the trailing-junk fault over TCP and
// Unix: the keep-alive, request-count and pipelining checks report the
// bytes nobody asked for (verdict unsolicited) rather than count them as
// the answer to request 2 ("honored", "supported").
func TestUnsolicitedBytesProbe(t *testing.T) {
	for _, tc := range []struct {
		proto  string
		checks []string
	}{
		{fixtures.ProtoFCGI, []string{"keep_conn", "max_requests_per_connection"}},
		{fixtures.ProtoHTTP, []string{"http11_persistent", "http10_keep_alive", "max_requests_per_connection", "pipelining"}},
	} {
		for _, network := range []string{"tcp", "unix"} {
			t.Run(tc.proto+"/"+network, func(t *testing.T) {
				srv := fixtures.StartTB(t, tc.proto, network, fixtures.Options{BodyBytes: 10, Fault: fixtures.FaultTrailingJunk})
				got := probeChecks(t, srv.URL("/"), tc.checks)
				for _, name := range tc.checks {
					if c := got[name]; c[0] != "unsolicited" || !strings.Contains(c[1], "bytes nobody asked for") {
						t.Errorf("%s: verdict %q (%s), want unsolicited", name, c[0], c[1])
					}
				}
			})
		}
	}
	// The same checks against a good backend are unaffected.
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	got := probeChecks(t, srv.URL("/"), []string{"http11_persistent", "pipelining"})
	if got["http11_persistent"][0] != "honored" || got["pipelining"][0] != "supported" {
		t.Errorf("a good backend: %v", got)
	}
}
