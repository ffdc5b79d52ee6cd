package fcgi

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/realbackend"
	"github.com/backbench/backbench/internal/testnet"
	"github.com/backbench/backbench/sockets"
)

// probeCfg is a probe of url with short bounds for tests.
func probeCfg(t *testing.T, url, docRoot string, timeout time.Duration) ProbeConfig {
	t.Helper()
	tg, err := sockets.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	return ProbeConfig{Config: Config{Target: tg, DocumentRoot: docRoot, Timeout: timeout}, MaxRequests: 25}
}

func newTestProber(t *testing.T, cfg ProbeConfig) *prober {
	t.Helper()
	p, err := newProber(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func intp(n int) *int    { return &n }
func boolp(b bool) *bool { return &b }

// TestProbeFixtureDefault runs the whole probe against the default built-in
// backend and checks every verdict and number.
func TestProbeFixtureDefault(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			s := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelPrefork, N: 3}, BodyBytes: 150000})
			r, err := Probe(context.Background(), probeCfg(t, s.URL("/x.php"), "/srv", 2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			verdicts := map[string]string{}
			for _, l := range r.Lines() {
				verdicts[l.Name] = l.Verdict
				if l.Evidence == "" {
					t.Errorf("%s: no evidence", l.Name)
				}
			}
			want := map[string]string{
				"get_values": VerdictAnswered, "get_values_empty": VerdictAnswered, "keep_conn": VerdictHonored,
				"max_requests_per_connection": VerdictNotReached, "multiplexing": VerdictRejected,
				"unknown_role": VerdictUnknownRole, "roles": VerdictUnknownRole,
				"unknown_type": VerdictUnknownType, "abort": VerdictEndRequest,
				"params": VerdictServed, "response": VerdictAnswered,
			}
			if !reflect.DeepEqual(verdicts, want) {
				t.Errorf("verdicts %v\nwant     %v", verdicts, want)
			}
			g := r.GetValues
			if !reflect.DeepEqual(g.Values, map[string]string{VarMaxConns: "3", VarMaxReqs: "3", VarMpxsConns: "0"}) ||
				!reflect.DeepEqual(g.MaxConns, intp(3)) || !reflect.DeepEqual(g.MpxsConns, intp(0)) ||
				g.UnknownAnswered || !reflect.DeepEqual(g.ClosedAfter, boolp(false)) {
				t.Errorf("get_values %+v", g)
			}
			if r.KeepConn.Served != 2 || !reflect.DeepEqual(r.KeepConn.ClosesWithoutFlag, boolp(true)) {
				t.Errorf("keep_conn %+v", r.KeepConn)
			}
			if m := r.MaxRequests; m.Requests != nil || m.Served != 25 || m.Bound != 25 {
				t.Errorf("max_requests %+v", m)
			}
			if m := r.Multiplexing; !m.FirstAnswered || !m.SecondAnswered || m.SecondStatus != "CANT_MPX_CONN" {
				t.Errorf("multiplexing %+v", m)
			}
			if r.UnknownRole.Role != 9 || r.Roles.Authorizer.Verdict != VerdictUnknownRole || r.Roles.Filter.Verdict != VerdictUnknownRole {
				t.Errorf("roles %+v %+v", r.UnknownRole, r.Roles)
			}
			if a := r.Abort; a.ProtocolStatus != "REQUEST_COMPLETE" || a.AppStatus == nil || *a.AppStatus != 0 || a.StdoutBytes != 0 {
				t.Errorf("abort %+v", a)
			}
			for name, c := range map[string]ParamsCase{"127": r.Params.Length127, "128": r.Params.Length128, "split": r.Params.SplitPair, "64k": r.Params.Value64K} {
				if c.Verdict != VerdictServed || c.Status != 200 {
					t.Errorf("params %s: %+v", name, c)
				}
			}
			// 150000 body bytes and a short head: two full records of
			// 65528, the rest, the empty end record.
			resp := r.Response
			if resp.StdoutRecords != 4 || resp.MaxStdoutRecord != ChunkSize || resp.StdoutSizes[0] != ChunkSize || resp.StdoutSizes[3] != 0 ||
				!resp.PaddedTo8 || resp.Stderr || resp.Status != 200 || resp.StatusHeader != "200 OK" ||
				resp.ProtocolStatus != "REQUEST_COMPLETE" || resp.StdoutBytes < 150000 {
				t.Errorf("response %+v", resp)
			}
			sum := strings.Join(r.Summary(), "\n")
			if !strings.Contains(sum, "-k is meaningful") || !strings.Contains(sum, "-c above 3 will queue behind kept connections") {
				t.Errorf("summary:\n%s", sum)
			}
			// JSON: each check under its key, numbers as numbers.
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			for key, v := range want {
				if m[key]["verdict"] != v || m[key]["evidence"] == "" {
					t.Errorf("JSON %s: %v", key, m[key])
				}
			}
			if m["get_values"]["max_conns"] != 3.0 || m["response"]["max_stdout_record"] != float64(ChunkSize) {
				t.Errorf("JSON numbers: %v %v", m["get_values"], m["response"])
			}
		})
	}
}

// TestProbeFixtureBehaviours runs single checks against built-in backends
// configured every way the checks distinguish.
func TestProbeFixtureBehaviours(t *testing.T) {
	type check func(t *testing.T, p *prober)
	verdict := func(got Check, want string) func(t *testing.T) {
		return func(t *testing.T) {
			t.Helper()
			if got.Verdict != want {
				t.Errorf("verdict %q, want %q (evidence: %s)", got.Verdict, want, got.Evidence)
			}
		}
	}
	ctx := context.Background()
	cases := []struct {
		name  string
		opts  fixtures.Options
		check check
	}{
		{"keep-conn ignored", fixtures.Options{Behaviour: fixtures.Behaviour{KeepConn: fixtures.KeepConnIgnore}}, func(t *testing.T, p *prober) {
			r := p.keepConn(ctx)
			verdict(r.Check, VerdictIgnored)(t)
			if r.Served != 1 || !reflect.DeepEqual(r.ClosesWithoutFlag, boolp(true)) {
				t.Errorf("%+v", r)
			}
			m := p.maxRequests(ctx)
			verdict(m.Check, VerdictMeasured)(t)
			if !reflect.DeepEqual(m.Requests, intp(1)) {
				t.Errorf("max requests %+v", m)
			}
		}},
		{"keep-conn always", fixtures.Options{Behaviour: fixtures.Behaviour{KeepConn: fixtures.KeepConnAlways}}, func(t *testing.T, p *prober) {
			r := p.keepConn(ctx)
			verdict(r.Check, VerdictHonored)(t)
			if !reflect.DeepEqual(r.ClosesWithoutFlag, boolp(false)) {
				t.Errorf("%+v", r)
			}
		}},
		{"keep-alive off", fixtures.Options{KeepAlive: fixtures.KeepAlive{Off: true}}, func(t *testing.T, p *prober) {
			verdict(p.keepConn(ctx).Check, VerdictIgnored)(t)
		}},
		{"close after 7", fixtures.Options{KeepAlive: fixtures.KeepAlive{Max: 7}}, func(t *testing.T, p *prober) {
			m := p.maxRequests(ctx)
			verdict(m.Check, VerdictMeasured)(t)
			if !reflect.DeepEqual(m.Requests, intp(7)) || m.Served != 7 {
				t.Errorf("%+v", m)
			}
			r := &ProbeReport{MaxRequests: m}
			if !strings.Contains(strings.Join(r.Summary(), "\n"), "every 7 requests") {
				t.Errorf("summary %q", r.Summary())
			}
		}},
		{"multiplex supported", fixtures.Options{Behaviour: fixtures.Behaviour{Multiplex: fixtures.MuxSupport}}, func(t *testing.T, p *prober) {
			m := p.multiplexing(ctx)
			verdict(m.Check, VerdictSupported)(t)
			if m.SecondStatus != "REQUEST_COMPLETE" {
				t.Errorf("%+v", m)
			}
		}},
		{"multiplex lost", fixtures.Options{Behaviour: fixtures.Behaviour{Multiplex: fixtures.MuxLose}}, func(t *testing.T, p *prober) {
			m := p.multiplexing(ctx)
			verdict(m.Check, VerdictLost)(t)
			if !m.FirstAnswered || m.SecondAnswered || !strings.Contains(m.Evidence, "no answer") {
				t.Errorf("%+v", m)
			}
		}},
		{"multiplex closes", fixtures.Options{Behaviour: fixtures.Behaviour{Multiplex: fixtures.MuxClose}}, func(t *testing.T, p *prober) {
			verdict(p.multiplexing(ctx).Check, VerdictClosed)(t)
		}},
		{"get-values ignored", fixtures.Options{Behaviour: fixtures.Behaviour{GetValues: fixtures.ReplyIgnore}}, func(t *testing.T, p *prober) {
			g := p.getValues(ctx)
			verdict(g.Check, VerdictNoAnswer)(t)
			if g.Values != nil || g.ClosedAfter != nil {
				t.Errorf("%+v", g)
			}
			r := &ProbeReport{GetValues: g}
			if !strings.Contains(strings.Join(r.Summary(), "\n"), "GET_VALUES gets no answer") {
				t.Errorf("summary %q", r.Summary())
			}
		}},
		{"get-values closes", fixtures.Options{Behaviour: fixtures.Behaviour{GetValues: fixtures.ReplyClose}}, func(t *testing.T, p *prober) {
			verdict(p.getValues(ctx).Check, VerdictClosed)(t)
		}},
		{"get-values mpxs only", fixtures.Options{Behaviour: fixtures.Behaviour{GetValues: fixtures.ReplyMpxsOnly}}, func(t *testing.T, p *prober) {
			g := p.getValues(ctx)
			verdict(g.Check, VerdictAnswered)(t)
			if !reflect.DeepEqual(g.Values, map[string]string{VarMpxsConns: "0"}) || g.MaxConns != nil || !reflect.DeepEqual(g.ClosedAfter, boolp(false)) {
				t.Errorf("%+v", g)
			}
		}},
		{"unknown type ignored", fixtures.Options{Behaviour: fixtures.Behaviour{UnknownType: fixtures.ReplyIgnore}}, func(t *testing.T, p *prober) {
			verdict(p.unknownType(ctx).Check, VerdictNoAnswer)(t)
		}},
		{"unknown type closes", fixtures.Options{Behaviour: fixtures.Behaviour{UnknownType: fixtures.ReplyClose}}, func(t *testing.T, p *prober) {
			verdict(p.unknownType(ctx).Check, VerdictClosed)(t)
		}},
		{"unknown role closes", fixtures.Options{Behaviour: fixtures.Behaviour{UnknownRole: fixtures.ReplyClose}}, func(t *testing.T, p *prober) {
			verdict(p.role(ctx, ProbeUnknownRole, time.Time{}).Check, VerdictClosed)(t)
			verdict(p.roles(ctx).Check, VerdictClosed)(t)
		}},
		{"status 404", fixtures.Options{Status: 404}, func(t *testing.T, p *prober) {
			r := p.response(ctx)
			verdict(r.Check, VerdictAnswered)(t)
			if r.Status != 404 || r.StatusHeader != "404 Not Found" {
				t.Errorf("%+v", r)
			}
			rep := &ProbeReport{Response: r}
			if !strings.Contains(strings.Join(rep.Summary(), "\n"), "status 404") {
				t.Errorf("summary %q", rep.Summary())
			}
		}},
	}
	for _, network := range []string{"tcp", "unix"} {
		for _, tc := range cases {
			t.Run(network+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				s := fixtures.StartTB(t, fixtures.ProtoFCGI, network, tc.opts)
				tc.check(t, newTestProber(t, probeCfg(t, s.URL("/x.php"), "/srv", time.Second)))
			})
		}
	}
}

// silentListener accepts connections and never reads or writes; it closes
// them when the test ends.
func silentListener(t *testing.T, network string) string {
	t.Helper()
	return fixtures.StartRawTB(t, network, nil).URL("fcgi", "/x.php")
}

// TestProbeSilentServer: against a server that accepts and never answers,
// every check ends within its timeout with "no answer".
func TestProbeSilentServer(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			t.Parallel()
			url := silentListener(t, network)
			start := time.Now()
			r, err := Probe(context.Background(), probeCfg(t, url, "/srv", timeout))
			if err != nil {
				t.Fatal(err)
			}
			// Ten checks, each bounded by the timeout.
			if el := time.Since(start); el > 10*timeout+20*time.Second {
				t.Errorf("probe took %v", el)
			}
			for _, l := range r.Lines() {
				want := VerdictNoAnswer
				if l.Name == "params" {
					want = VerdictNotServed
				}
				if l.Verdict != want {
					t.Errorf("%s: %q (%s), want %q", l.Name, l.Verdict, l.Evidence, want)
				}
				// Bounded, with room for a loaded machine.
				if l.Seconds > (timeout + 3*time.Second).Seconds() {
					t.Errorf("%s took %v s", l.Name, l.Seconds)
				}
			}
			if !strings.Contains(r.Params.Value64K.Evidence, "no answer") {
				t.Errorf("params evidence %q", r.Params.Value64K.Evidence)
			}
		})
	}
}

// TestProbeCancel: a cancelled context ends the probe at once.
func TestProbeCancel(t *testing.T) {
	url := silentListener(t, "tcp")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	r, err := Probe(ctx, probeCfg(t, url, "/srv", time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("cancelled probe took %v", el)
	}
	if r.GetValues.Verdict != VerdictNoAnswer {
		t.Errorf("get_values %+v", r.GetValues)
	}
}

func TestProbeBadConfig(t *testing.T) {
	if _, err := Probe(context.Background(), ProbeConfig{Config: Config{Target: sockets.Target{Network: "udp"}}}); err == nil {
		t.Error("udp target accepted")
	}
	tg, _ := sockets.ParseTarget("fcgi://127.0.0.1:9/")
	if _, err := Probe(context.Background(), ProbeConfig{Config: Config{Target: tg, Timeout: -1}}); err == nil {
		t.Error("negative timeout accepted")
	}
}

// TestProbeRefused: a server that is gone before the first check is
// ErrUnreachable, naming the connect failure, at once.
func TestProbeRefused(t *testing.T) {
	addr := testnet.DeadTCP(t, "127.0.0.1")
	r, err := Probe(context.Background(), probeCfg(t, "fcgi://"+addr+"/", "/", time.Second))
	if !errors.Is(err, ErrUnreachable) || r != nil || !strings.HasSuffix(err.Error(), ": connection refused") {
		t.Errorf("report %v, error %v", r, err)
	}
}

// TestProbePHPFPM asserts what php-fpm 8.2 really does (observed on Debian
// bookworm): GET_VALUES answers FCGI_MPXS_CONNS=0 only and leaves the
// connection open (it serves a request after it); KEEP_CONN honoured; a
// second request on a busy connection is lost and the connection reset;
// unknown roles and types close; AUTHORIZER and FILTER are served as
// responders; ABORT_REQUEST ends the input (the script runs); a pair split
// across PARAMS records, and so a value over two records, is refused with a
// reset.
func TestProbePHPFPM(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			f := realbackend.PHPFPM(t, network)
			r, err := Probe(context.Background(), probeCfg(t, f.URL(realbackend.HelloScript), f.DocRoot, 5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"get_values": VerdictAnswered, "get_values_empty": VerdictAnswered, "keep_conn": VerdictHonored,
				"max_requests_per_connection": VerdictNotReached, "multiplexing": VerdictLost,
				"unknown_role": VerdictClosed, "roles": VerdictServed,
				"unknown_type": VerdictClosed, "abort": VerdictEndRequest,
				"params": VerdictNotServed, "response": VerdictAnswered,
			}
			for _, l := range r.Lines() {
				if l.Verdict != want[l.Name] {
					t.Errorf("%s: %q (%s), want %q", l.Name, l.Verdict, l.Evidence, want[l.Name])
				}
			}
			if g := r.GetValues; !reflect.DeepEqual(g.Values, map[string]string{VarMpxsConns: "0"}) || g.MaxConns != nil ||
				!reflect.DeepEqual(g.MpxsConns, intp(0)) || !reflect.DeepEqual(g.ClosedAfter, boolp(false)) {
				t.Errorf("get_values %+v", g)
			}
			if !reflect.DeepEqual(r.KeepConn.ClosesWithoutFlag, boolp(true)) {
				t.Errorf("keep_conn %+v", r.KeepConn)
			}
			if m := r.Multiplexing; !m.FirstAnswered || m.SecondAnswered {
				t.Errorf("multiplexing %+v", m)
			}
			p := r.Params
			if p.Length127.Verdict != VerdictServed || p.Length128.Verdict != VerdictServed ||
				p.SplitPair.Verdict != VerdictNotServed || p.Value64K.Verdict != VerdictNotServed {
				t.Errorf("params %s", p.Evidence)
			}
			if a := r.Abort; a.ProtocolStatus != "REQUEST_COMPLETE" || a.StdoutBytes == 0 {
				t.Errorf("abort %+v", a)
			}
			if resp := r.Response; resp.Status != 200 || !resp.PaddedTo8 || resp.Stderr || resp.StdoutBytes == 0 {
				t.Errorf("response %+v", resp)
			}
			if sum := strings.Join(r.Summary(), "\n"); !strings.Contains(sum, "-k is meaningful") || !strings.Contains(sum, "lost silently") {
				t.Errorf("summary:\n%s", sum)
			}
		})
	}
}

// TestProbeFCGIWrap asserts what fcgiwrap (libfcgi) really does: GET_VALUES
// answers 1, 1 and 0 and leaves the connection open, and a GET_VALUES that
// asks no name gets no answer at all (Debian 12's libfcgi 2.4.2, over TCP
// and Unix sockets alike); KEEP_CONN honoured;
// a second request gets CANT_MPX_CONN; an unknown role closes; an unknown
// type gets UNKNOWN_TYPE; every role is run as the CGI script; every params
// edge case is served.
func TestProbeFCGIWrap(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			w := realbackend.StartFCGIWrap(t, network)
			r, err := Probe(context.Background(), probeCfg(t, w.URL(realbackend.CGIHelloScript), w.DocRoot, 5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"get_values": VerdictAnswered, "get_values_empty": VerdictNoAnswer, "keep_conn": VerdictHonored,
				"max_requests_per_connection": VerdictNotReached, "multiplexing": VerdictRejected,
				"unknown_role": VerdictClosed, "roles": VerdictServed,
				"unknown_type": VerdictUnknownType, "abort": VerdictEndRequest,
				"params": VerdictServed, "response": VerdictAnswered,
			}
			for _, l := range r.Lines() {
				if l.Verdict != want[l.Name] {
					t.Errorf("%s: %q (%s), want %q", l.Name, l.Verdict, l.Evidence, want[l.Name])
				}
			}
			if g := r.GetValues; !reflect.DeepEqual(g.MaxConns, intp(1)) || !reflect.DeepEqual(g.MaxReqs, intp(1)) ||
				!reflect.DeepEqual(g.MpxsConns, intp(0)) || !reflect.DeepEqual(g.ClosedAfter, boolp(false)) {
				t.Errorf("get_values %+v", g)
			}
			if resp := r.Response; resp.Status != 200 || resp.StdoutBytes != int64(len("Content-Type: text/plain\r\n\r\n"+realbackend.CGIHelloBody)) {
				t.Errorf("response %+v", resp)
			}
			if sum := strings.Join(r.Summary(), "\n"); !strings.Contains(sum, "-c above 1 will queue behind kept connections") {
				t.Errorf("summary:\n%s", sum)
			}
		})
	}
}
