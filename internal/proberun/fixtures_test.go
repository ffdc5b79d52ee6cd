package proberun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/proberun"
	"github.com/backbench/backbench/internal/protocol"
)

// The probe of the built-in backends (fixtures), through proberun.Run as
// backbench probe calls it: plan.Protocol and plan.Request build the
// protocol and its request (plan is above proberun; it is used here only
// to build the input). The flags, exit statuses and -o stay in
// cmd/backbench.

// probeFixtureRun probes url as backbench probe does with o (Protocol,
// Headers and Request filled in from url) and returns what Run wrote.
func probeFixtureRun(t *testing.T, url string, o proberun.Options) (string, error) {
	t.Helper()
	targets, err := proberun.Targets(url)
	if err != nil {
		t.Fatal(err)
	}
	if o.Protocol, err = plan.Protocol(targets[0]); err != nil {
		t.Fatal(err)
	}
	if o.Headers, o.Request, err = plan.Request(o.Protocol, nil, nil, "", false); err != nil {
		t.Fatal(err)
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	if o.IdleMax == 0 {
		o.IdleMax = 10 * time.Second
	}
	if o.MaxRequests == 0 {
		o.MaxRequests = 1000
	}
	var b bytes.Buffer
	err = proberun.Run(context.Background(), &b, url, targets, o)
	return b.String(), err
}

// TestProbeFixtures probes built-in backends over TCP and Unix sockets, in
// text and JSON.
func TestProbeFixtures(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, network := range []string{"tcp", "unix"} {
			t.Run(proto+"/"+network, func(t *testing.T) {
				t.Parallel()
				s := fixtures.StartTB(t, proto, network, fixtures.Options{
					Model:     fixtures.Model{Kind: fixtures.ModelPrefork, N: 2},
					KeepAlive: fixtures.KeepAlive{Max: 5},
					Behaviour: fixtures.Behaviour{IdleTimeout: 1500 * time.Millisecond, HTTP10KeepAlive: fixtures.HTTP10Silent},
				})
				o := proberun.Options{Timeout: 3 * time.Second, IdleMax: 4 * time.Second, MaxRequests: 50}
				out, err := probeFixtureRun(t, s.URL("/x"), o)
				if err != nil {
					t.Fatal(err)
				}
				wantLines := map[string][]string{
					fixtures.ProtoFCGI: {"get_values", "answered", "keep_conn", "honored", "max_requests_per_connection", "measured",
						"multiplexing", "rejected", "unknown_role", "UNKNOWN_ROLE", "roles", "unknown_type", "UNKNOWN_TYPE",
						"abort", "END_REQUEST", "params", "served", "response", "answered"},
					fixtures.ProtoHTTP: {"http11_persistent", "honored", "http10_keep_alive", "max_requests_per_connection", "measured",
						"idle_timeout_seconds", "pipelining", "supported", "framing", "content-length", "server", "present"},
				}[proto]
				for _, w := range wantLines {
					if !strings.Contains(out, w) {
						t.Errorf("output lacks %q:\n%s", w, out)
					}
				}
				summary := map[string][]string{
					fixtures.ProtoFCGI: {"-c above 2 will queue behind kept connections", "every 5 requests"},
					fixtures.ProtoHTTP: {"ab -k would hang", "every 5 requests", "idle kept connections are closed after"},
				}[proto]
				for _, w := range summary {
					if !strings.Contains(out, w) {
						t.Errorf("summary lacks %q:\n%s", w, out)
					}
				}

				o.JSON = true
				out, err = probeFixtureRun(t, s.URL("/x"), o)
				if err != nil {
					t.Fatalf("json: %v", err)
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(out), &m); err != nil {
					t.Fatalf("bad JSON: %v\n%s", err, out)
				}
				mr, _ := m["max_requests_per_connection"].(map[string]any)
				if mr["verdict"] != "measured" || mr["requests"] != 5.0 {
					t.Errorf("max_requests_per_connection %v", mr)
				}
				if tg, _ := m["target"].(map[string]any); tg["network"] != network || tg["protocol"] != proto {
					t.Errorf("target %v", m["target"])
				}
				if sum, _ := m["summary"].([]any); len(sum) == 0 {
					t.Errorf("summary %v", m["summary"])
				}
				if proto == fixtures.ProtoHTTP {
					h10, _ := m["http10_keep_alive"].(map[string]any)
					if h10["verdict"] != "honored" || h10["ab_sees_keep_alive"] != false {
						t.Errorf("http10_keep_alive %v", h10)
					}
					idle, _ := m["idle_timeout_seconds"].(map[string]any)
					if _, ok := idle["idle_seconds"].(float64); !ok || idle["verdict"] != "measured" {
						t.Errorf("idle_timeout_seconds %v", idle)
					}
				}
			})
		}
	}
}

// TestProbeBehaviours: the backend's FastCGI behaviours (what serve's
// --fcgi-multiplex, --fcgi-get-values and --fcgi-keep-conn set) are what
// the probe sees.
func TestProbeBehaviours(t *testing.T) {
	s := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{Behaviour: fixtures.Behaviour{
		Multiplex: fixtures.MuxSupport, GetValues: fixtures.ReplyIgnore, KeepConn: fixtures.KeepConnIgnore}})
	out, err := probeFixtureRun(t, s.URL("/x"), proberun.Options{JSON: true, Timeout: 300 * time.Millisecond, MaxRequests: 5})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]any
	json.Unmarshal([]byte(out), &m)
	for key, want := range map[string]string{"multiplexing": "supported", "get_values": "no answer", "keep_conn": "ignored"} {
		if m[key]["verdict"] != want {
			t.Errorf("%s: %v, want %q", key, m[key], want)
		}
	}
}

// startProbePortRange starts one built-in FastCGI backend per options on
// consecutive 127.0.0.1 ports and returns the {A..B} URL of the range and
// the servers.
func startProbePortRange(t *testing.T, opts ...fixtures.Options) (string, []*fixtures.Server) {
	t.Helper()
	for try := 0; try < 50; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		var started []*fixtures.Server
		for i, o := range opts {
			s, err := fixtures.Start(fixtures.ProtoFCGI, "tcp", fmt.Sprintf("127.0.0.1:%d", base+i), o)
			if err != nil {
				break
			}
			started = append(started, s)
		}
		if len(started) == len(opts) {
			for _, s := range started {
				t.Cleanup(func() { s.Close() })
			}
			return fmt.Sprintf("fcgi://127.0.0.1:{%d..%d}/x", base, base+len(opts)-1), started
		}
		for _, s := range started {
			s.Close()
		}
	}
	t.Fatal("no consecutive free ports")
	return "", nil
}

// TestProbePortRangeAndHTTPS: a {A..B} range is probed address by address,
// one section each, with a line per check on which they disagree (and a
// JSON object per address); https is probed over TLS, with Insecure for a
// self-signed certificate, which without it is an unreachable target.
func TestProbePortRangeAndHTTPS(t *testing.T) {
	url, _ := startProbePortRange(t, fixtures.Options{}, fixtures.Options{Behaviour: fixtures.Behaviour{KeepConn: fixtures.KeepConnIgnore}})
	o := proberun.Options{Timeout: 2 * time.Second, MaxRequests: 20}
	out, err := probeFixtureRun(t, url, o)
	if err != nil {
		t.Fatal(err)
	}
	a, b, _ := strings.Cut(strings.TrimPrefix(strings.TrimSuffix(url, "}/x"), "fcgi://127.0.0.1:{"), "..")
	for _, want := range []string{
		"Probing 2 addresses of " + url + ", one after the other\n",
		"\nProbing fcgi://127.0.0.1:" + a + "/x (tcp 127.0.0.1:" + a + ")",
		"\nProbing fcgi://127.0.0.1:" + b + "/x (tcp 127.0.0.1:" + b + ")",
		"The addresses disagree on keep_conn: honored at tcp:127.0.0.1:" + a + "; ignored at tcp:127.0.0.1:" + b + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "For benchmarking:") != 2 || strings.Contains(out, "disagree on get_values") {
		t.Errorf("want two sections and no disagreement on get_values:\n%s", out)
	}
	o.JSON = true
	out, err = probeFixtureRun(t, url, o)
	var rj struct {
		URL           string           `json:"url"`
		Addresses     []map[string]any `json:"addresses"`
		Disagreements []struct {
			Check    string            `json:"check"`
			Verdicts map[string]string `json:"verdicts"`
		} `json:"disagreements"`
	}
	if jerr := json.Unmarshal([]byte(out), &rj); err != nil || jerr != nil {
		t.Fatalf("json: %v %v\n%s", err, jerr, out)
	}
	if rj.URL != url || len(rj.Addresses) != 2 || rj.Addresses[1]["keep_conn"] == nil {
		t.Errorf("json %+v", rj)
	}
	found := false
	for _, d := range rj.Disagreements {
		found = found || d.Check == "keep_conn" && d.Verdicts["tcp:127.0.0.1:"+b] == "ignored"
	}
	if !found {
		t.Errorf("json disagreements %+v", rj.Disagreements)
	}

	// An address that cannot be reached: one line, the others go on; all
	// of them: an unreachable target.
	url, srvs := startProbePortRange(t, fixtures.Options{}, fixtures.Options{})
	srvs[1].Close()
	out, err = probeFixtureRun(t, url, proberun.Options{Timeout: 2 * time.Second, MaxRequests: 5})
	if err != nil || !strings.Contains(out, "): not reached: cannot connect to tcp ") || !strings.Contains(out, "\n1 of the 2 addresses could not be reached (see above).\n") ||
		!strings.Contains(out, "Only one address was probed: nothing to compare.") {
		t.Errorf("one dead address: %v\n%s", err, out)
	}
	srvs[0].Close()
	var ue *protocol.UnreachableError
	if _, err = probeFixtureRun(t, url, proberun.Options{Timeout: 2 * time.Second}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("all dead: %v", err)
	}

	cfg, err := fixtures.SelfSignedTLS()
	if err != nil {
		t.Fatal(err)
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{TLS: cfg})
	out, err = probeFixtureRun(t, srv.URL("/"), proberun.Options{Timeout: 2 * time.Second, IdleMax: time.Second, MaxRequests: 20, Insecure: true})
	if err != nil || !strings.Contains(out, "http11_persistent            honored") || !strings.Contains(out, "server                       present") {
		t.Errorf("https: %v\n%s", err, out)
	}
	out, err = probeFixtureRun(t, srv.URL("/"), proberun.Options{Timeout: 2 * time.Second})
	if !errors.As(err, &ue) || out != "" || !strings.HasSuffix(err.Error(), "certificate does not verify: x509: certificate signed by unknown authority; --insecure accepts it") {
		t.Errorf("https without Insecure: err %v, output %q", err, out)
	}
}

// TestProbeFragileFixture: a server that dies on a GET_VALUES asking for
// a name (and on an empty connection) answers the ordinary checks and the
// empty GET_VALUES first; the probe names the check that took it down and
// skips the rest. Only and Skip choose the checks.
func TestProbeFragileFixture(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			srv := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial},
				Behaviour: fixtures.Behaviour{GetValues: fixtures.ReplyDie, DieOnEmptyConn: true, KeepConn: fixtures.KeepConnIgnore}})
			out, err := probeFixtureRun(t, srv.URL("/x"), proberun.Options{Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
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
	out, err := probeFixtureRun(t, srv.URL("/x"), proberun.Options{Skip: []string{"get_values"}, Only: []string{"response", "get_values", "abort"}})
	if err != nil || !strings.Contains(out, "get_values                   skipped          not selected") ||
		!strings.Contains(out, "abort                        END_REQUEST") || !strings.Contains(out, "keep_conn                    skipped") {
		t.Errorf("%v:\n%s", err, out)
	}
	if r := srv.DeathReason(); r != "" {
		t.Errorf("died: %s", r)
	}
	var re *proberun.RequestError
	if _, err := probeFixtureRun(t, srv.URL("/x"), proberun.Options{Only: []string{"nosuch"}}); !errors.As(err, &re) || !strings.Contains(err.Error(), `unknown check "nosuch"`) {
		t.Errorf("Only nosuch: %v", err)
	}
}

// TestProbeHTTPOnlySkipFixture: Only and Skip choose the HTTP checks too.
func TestProbeHTTPOnlySkipFixture(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	out, err := probeFixtureRun(t, srv.URL("/"), proberun.Options{Only: []string{"http11_persistent", "server"}, Skip: []string{"server"}})
	if err != nil || !strings.Contains(out, "http11_persistent            honored") ||
		!strings.Contains(out, "server                       skipped          not selected") ||
		!strings.Contains(out, "idle_timeout_seconds         skipped") {
		t.Errorf("%v:\n%s", err, out)
	}
	var re *proberun.RequestError
	if _, err := probeFixtureRun(t, srv.URL("/"), proberun.Options{Skip: []string{"abort"}}); !errors.As(err, &re) || !strings.Contains(err.Error(), `unknown check "abort"`) {
		t.Errorf("Skip abort on HTTP: %v", err)
	}
}
