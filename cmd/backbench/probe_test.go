package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
)

// TestProbeCommand runs probe end to end against built-in backends over TCP
// and Unix sockets, in text and JSON.
func TestProbeCommand(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, network := range []string{"tcp", "unix"} {
			t.Run(proto+"/"+network, func(t *testing.T) {
				t.Parallel()
				s := fixtures.StartTB(t, proto, network, fixtures.Options{
					Model:     fixtures.Model{Kind: fixtures.ModelPrefork, N: 2},
					KeepAlive: fixtures.KeepAlive{Max: 5},
					Behaviour: fixtures.Behaviour{IdleTimeout: 1500 * time.Millisecond, HTTP10KeepAlive: fixtures.HTTP10Silent},
				})
				args := []string{"probe", "-s", "3", "--idle-max", "4", "--max-requests", "50", s.URL("/x")}
				code, out, errs := runMain(t, context.Background(), args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
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

				code, out, errs = runMain(t, context.Background(), append([]string{"probe", "--format", "json"}, args[1:]...)...)
				if code != 0 {
					t.Fatalf("json: exit %d: %s", code, errs)
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

func TestProbeCommandErrors(t *testing.T) {
	refused := deadTCPAddr(t)
	_, refusedPort, _ := net.SplitHostPort(refused)
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no URL", []string{"probe"}, exitUsage, "want exactly one URL"},
		{"bad format", []string{"probe", "--format", "xml", "http://127.0.0.1:1/"}, exitUsage, "format"},
		{"bad timeout", []string{"probe", "-s", "0", "http://127.0.0.1:1/"}, exitUsage, "-s must be"},
		{"bad idle", []string{"probe", "--idle-max", "0", "http://127.0.0.1:1/"}, exitUsage, "--idle-max"},
		{"bad max", []string{"probe", "--max-requests", "0", "http://127.0.0.1:1/"}, exitUsage, "--max-requests"},
		{"bad URL", []string{"probe", "ftp://x/"}, exitUsage, "unknown scheme"},
		{"insecure on http", []string{"probe", "--insecure", "http://127.0.0.1:1/"}, exitUsage, "--insecure applies to https:// targets only"},
		{"range and unix socket", []string{"probe", "--unix-socket", "/tmp/x.sock", "fcgi://127.0.0.1:{1..2}/"}, exitUsage, "do not mix"},
		{"bad range", []string{"probe", "fcgi://127.0.0.1:{2..1}/"}, exitUsage, "bad range"},
		{"range refused", []string{"probe", "fcgi://127.0.0.1:{" + refusedPort + ".." + refusedPort + "}/"}, exitUnreachable, "connection refused"},
		{"param on http", []string{"probe", "--param", "A=B", "http://127.0.0.1:1/"}, exitUsage, "fcgi:// targets only"},
		{"refused", []string{"probe", "fcgi://" + refused + "/"}, exitUnreachable, "connection refused"},
		{"no socket", []string{"probe", "http://unix:/nonexistent/bb.sock:/"}, exitUnreachable, "no such Unix socket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runMain(t, context.Background(), tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.msg) {
				t.Errorf("exit %d, stderr %q, stdout %q; want %d and %q", code, errs, out, tc.code, tc.msg)
			}
		})
	}
	code, out, _ := runMain(t, context.Background(), "probe", "--help")
	if code != 0 || !strings.Contains(out, "--idle-max") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

// TestServeBehaviourFlags: serve's behaviour flags reach the backend, as
// probe sees it.
func TestServeBehaviourFlags(t *testing.T) {
	code, _, errs := runMain(t, context.Background(), "serve", "--fcgi-multiplex", "maybe", "--listen", "tcp:127.0.0.1:0")
	if code != exitUsage || !strings.Contains(errs, "fcgi-multiplex") {
		t.Errorf("bad word: exit %d %q", code, errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := net.Pipe()
	defer pr.Close()
	done := make(chan int, 1)
	go func() {
		code := Main(ctx, nil, []string{"serve", "--protocol", "fcgi", "--listen", "tcp:127.0.0.1:0",
			"--fcgi-multiplex", "support", "--fcgi-get-values", "ignore", "--fcgi-keep-conn", "ignore"}, pw, pw)
		pw.Close()
		done <- code
	}()
	buf := make([]byte, 256)
	n, err := pr.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	go func() { // drain whatever else serve prints
		for {
			if _, err := pr.Read(buf); err != nil {
				return
			}
		}
	}()
	f := strings.Fields(string(buf[:n]))
	if len(f) < 4 || f[0] != "listening" {
		t.Fatalf("serve printed %q", buf[:n])
	}
	code, out, errs := runMain(t, context.Background(), "probe", "--format", "json", "-s", "0.3", "--max-requests", "5", "fcgi://"+f[3]+"/x")
	if code != 0 {
		t.Fatalf("probe: exit %d %s", code, errs)
	}
	var m map[string]map[string]any
	json.Unmarshal([]byte(out), &m)
	for key, want := range map[string]string{"multiplexing": "supported", "get_values": "no answer", "keep_conn": "ignored"} {
		if m[key]["verdict"] != want {
			t.Errorf("%s: %v, want %q", key, m[key], want)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve exit %d", code)
	}
}

// startPortRange starts one built-in FastCGI backend per options on
// consecutive 127.0.0.1 ports and returns the {A..B} URL of the range and
// the servers.
func startPortRange(t *testing.T, opts ...fixtures.Options) (string, []*fixtures.Server) {
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

// TestProbePortRangeAndHTTPS: probe takes bench's URL forms. A {A..B} range
// is probed address by address, one section each, with a line per check
// on which they disagree (and a JSON object per address); https is probed
// over TLS, with --insecure for a self-signed certificate, which without it
// is one line and exit 1.
func TestProbePortRangeAndHTTPS(t *testing.T) {
	url, _ := startPortRange(t, fixtures.Options{}, fixtures.Options{Behaviour: fixtures.Behaviour{KeepConn: fixtures.KeepConnIgnore}})
	args := []string{"probe", "-s", "2", "--max-requests", "20", url}
	code, out, errs := runMain(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
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
	code, out, errs = runMain(t, context.Background(), append([]string{"probe", "--format", "json"}, args[1:]...)...)
	var rj struct {
		URL           string           `json:"url"`
		Addresses     []map[string]any `json:"addresses"`
		Disagreements []struct {
			Check    string            `json:"check"`
			Verdicts map[string]string `json:"verdicts"`
		} `json:"disagreements"`
	}
	if err := json.Unmarshal([]byte(out), &rj); code != 0 || err != nil {
		t.Fatalf("json: exit %d %v %s\n%s", code, err, errs, out)
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
	// of them: exit 1.
	url, srvs := startPortRange(t, fixtures.Options{}, fixtures.Options{})
	srvs[1].Close()
	code, out, errs = runMain(t, context.Background(), "probe", "-s", "2", "--max-requests", "5", url)
	if code != 0 || !strings.Contains(out, "): not reached: cannot connect to tcp ") || !strings.Contains(out, "\n1 of the 2 addresses could not be reached (see above).\n") ||
		!strings.Contains(out, "Only one address was probed: nothing to compare.") {
		t.Errorf("one dead address: exit %d %s\n%s", code, errs, out)
	}
	srvs[0].Close()
	if code, _, errs = runMain(t, context.Background(), "probe", "-s", "2", url); code != 1 || !strings.Contains(errs, "connection refused") {
		t.Errorf("all dead: exit %d %q", code, errs)
	}

	cfg, err := fixtures.SelfSignedTLS()
	if err != nil {
		t.Fatal(err)
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{TLS: cfg})
	code, out, errs = runMain(t, context.Background(), "probe", "-s", "2", "--idle-max", "1", "--max-requests", "20", "--insecure", srv.URL("/"))
	if code != 0 || !strings.Contains(out, "http11_persistent            honored") || !strings.Contains(out, "server                       present") {
		t.Errorf("https: exit %d %s\n%s", code, errs, out)
	}
	code, out, errs = runMain(t, context.Background(), "probe", "-s", "2", srv.URL("/"))
	if code != 1 || out != "" || !strings.HasSuffix(errs, "certificate does not verify: x509: certificate signed by unknown authority; --insecure accepts it\n") {
		t.Errorf("https without --insecure: exit %d, stderr %q, stdout %q", code, errs, out)
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
