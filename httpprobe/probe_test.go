package httpprobe

import (
	"context"
	"encoding/json"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/sockets"
)

func probeConfig(t *testing.T, url string, timeout time.Duration) ProbeConfig {
	t.Helper()
	tg, err := sockets.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	return ProbeConfig{Target: tg, Timeout: timeout, IdleMax: 3 * time.Second, MaxRequests: 25}
}

func testProber(t *testing.T, cfg ProbeConfig) *prober {
	t.Helper()
	p, err := newProber(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProbeFixtureDefault runs the whole probe against the default HTTP
// backend (with a short idle timeout) and checks every verdict.
func TestProbeFixtureDefault(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			t.Parallel()
			s := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{BodyBytes: 700,
				// Long enough that a client delayed by a loaded machine
				// is not closed on between the max-requests requests.
				Behaviour: fixtures.Behaviour{IdleTimeout: 1500 * time.Millisecond}})
			r, err := Probe(context.Background(), probeConfig(t, s.URL("/x"), 2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, l := range r.Lines() {
				got[l.Name] = l.Verdict
				if l.Evidence == "" {
					t.Errorf("%s: no evidence", l.Name)
				}
			}
			want := map[string]string{
				"http11_persistent": VerdictHonored, "http10_keep_alive": VerdictHonored,
				"max_requests_per_connection": VerdictNotReached, "idle_timeout_seconds": VerdictMeasured,
				"pipelining": VerdictSupported, "framing": VerdictContentLength, "server": VerdictPresent,
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("verdicts %v\nwant     %v", got, want)
			}
			h := r.HTTP10KeepAlive
			if h.Served != 2 || h.ResponseVersion != "HTTP/1.0" || !h.ConnectionKeepAlive || !h.KeepAliveHeader || !h.ABSeesKeepAlive {
				t.Errorf("http10 %+v", h)
			}
			if r.MaxRequests.Served != 25 || r.MaxRequests.Requests != nil {
				t.Errorf("max requests %+v", r.MaxRequests)
			}
			// The fixture closes 1.5 s after the response; a late client
			// goroutine measures less, a slow server more.
			if sec := r.IdleTimeout.IdleSeconds; sec == nil || *sec < 0.05 || *sec >= 3 {
				t.Errorf("idle %+v", r.IdleTimeout)
			}
			if r.Pipelining.Answered != 2 || r.Framing.Status != 200 || r.Framing.BodyBytes != 700 || r.Framing.ResponseVersion != "HTTP/1.1" {
				t.Errorf("pipelining %+v framing %+v", r.Pipelining, r.Framing)
			}
			if r.Server.Server != "backbench-fixture" || r.Server.Token != "backbench-fixture" {
				t.Errorf("server %+v", r.Server)
			}
			sum := strings.Join(r.Summary(), "\n")
			for _, w := range []string{"-k is meaningful over HTTP/1.1", "ab -k works", "idle kept connections are closed after "} {
				if !strings.Contains(sum, w) {
					t.Errorf("summary lacks %q:\n%s", w, sum)
				}
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			for k, v := range want {
				if m[k]["verdict"] != v {
					t.Errorf("JSON %s: %v", k, m[k])
				}
			}
			if _, ok := m["idle_timeout_seconds"]["idle_seconds"].(float64); !ok || m["pipelining"]["answered"] != 2.0 {
				t.Errorf("JSON numbers: %v %v", m["idle_timeout_seconds"], m["pipelining"])
			}
		})
	}
}

// TestProbeFixtureBehaviours runs single checks against HTTP backends
// configured every way the checks distinguish.
func TestProbeFixtureBehaviours(t *testing.T) {
	ctx := context.Background()
	expect := func(t *testing.T, c Check, want string) {
		t.Helper()
		if c.Verdict != want {
			t.Errorf("verdict %q, want %q (evidence: %s)", c.Verdict, want, c.Evidence)
		}
	}
	cases := []struct {
		name  string
		path  string
		opts  fixtures.Options
		check func(t *testing.T, p *prober)
	}{
		{"keep-alive off", "/", fixtures.Options{KeepAlive: fixtures.KeepAlive{Off: true}}, func(t *testing.T, p *prober) {
			r := p.persistent(ctx, false)
			expect(t, r.Check, VerdictIgnored)
			if !r.ConnectionClose || r.Served != 1 {
				t.Errorf("%+v", r)
			}
			expect(t, p.persistent(ctx, true).Check, VerdictIgnored)
			m := p.maxRequests(ctx)
			expect(t, m.Check, VerdictMeasured)
			if m.Requests == nil || *m.Requests != 1 {
				t.Errorf("%+v", m)
			}
			expect(t, p.idle(ctx).Check, VerdictIgnored)
		}},
		{"close after 4", "/", fixtures.Options{KeepAlive: fixtures.KeepAlive{Max: 4}}, func(t *testing.T, p *prober) {
			m := p.maxRequests(ctx)
			expect(t, m.Check, VerdictMeasured)
			if m.Requests == nil || *m.Requests != 4 {
				t.Errorf("%+v", m)
			}
			r := &ProbeReport{MaxRequests: m}
			if !strings.Contains(strings.Join(r.Summary(), "\n"), "every 4 requests") {
				t.Errorf("summary %q", r.Summary())
			}
		}},
		{"http10 silent", "/", fixtures.Options{Behaviour: fixtures.Behaviour{HTTP10KeepAlive: fixtures.HTTP10Silent}}, func(t *testing.T, p *prober) {
			h := p.persistent(ctx, true)
			expect(t, h.Check, VerdictHonored)
			if h.KeepAliveHeader || h.ConnectionKeepAlive || h.ABSeesKeepAlive {
				t.Errorf("%+v", h)
			}
			r := &ProbeReport{HTTP10KeepAlive: h}
			if !strings.Contains(strings.Join(r.Summary(), "\n"), "ab -k would hang") {
				t.Errorf("summary %q", r.Summary())
			}
		}},
		{"http10 ignored", "/", fixtures.Options{Behaviour: fixtures.Behaviour{HTTP10KeepAlive: fixtures.HTTP10Ignore}}, func(t *testing.T, p *prober) {
			expect(t, p.persistent(ctx, true).Check, VerdictIgnored)
			expect(t, p.persistent(ctx, false).Check, VerdictHonored)
		}},
		{"no pipelining", "/", fixtures.Options{Behaviour: fixtures.Behaviour{NoPipelining: true}}, func(t *testing.T, p *prober) {
			r := p.pipelining(ctx)
			expect(t, r.Check, VerdictFirstOnly)
			if r.Answered != 1 || !strings.Contains(r.Evidence, "no answer") {
				t.Errorf("%+v", r)
			}
		}},
		{"idle longer than the bound", "/", fixtures.Options{Behaviour: fixtures.Behaviour{IdleTimeout: time.Minute}}, func(t *testing.T, p *prober) {
			p.cfg.IdleMax = 300 * time.Millisecond
			r := p.idle(ctx)
			expect(t, r.Check, VerdictNotReached)
			if r.IdleSeconds != nil || r.MaxSeconds != 0.3 {
				t.Errorf("%+v", r)
			}
		}},
		{"chunked", fixtures.HTTPPathChunked, fixtures.Options{BodyBytes: 1000}, func(t *testing.T, p *prober) {
			f, s := p.framing(ctx)
			expect(t, f.Check, VerdictChunked)
			expect(t, s.Check, VerdictPresent)
			if f.BodyBytes != 1000 {
				t.Errorf("%+v", f)
			}
			expect(t, p.pipelining(ctx).Check, VerdictSupported)
		}},
		{"close-delimited", fixtures.HTTPPathClose, fixtures.Options{BodyBytes: 1000}, func(t *testing.T, p *prober) {
			f, _ := p.framing(ctx)
			expect(t, f.Check, VerdictCloseDelimited)
			if f.BodyBytes != 1000 {
				t.Errorf("%+v", f)
			}
			expect(t, p.persistent(ctx, false).Check, VerdictIgnored)
			r := &ProbeReport{Framing: f}
			if !strings.Contains(strings.Join(r.Summary(), "\n"), "keep-alive is impossible") {
				t.Errorf("summary %q", r.Summary())
			}
		}},
		{"no body", "/", fixtures.Options{Status: 204}, func(t *testing.T, p *prober) {
			f, _ := p.framing(ctx)
			expect(t, f.Check, VerdictNoBody)
			expect(t, p.persistent(ctx, false).Check, VerdictHonored)
		}},
	}
	for _, network := range []string{"tcp", "unix"} {
		for _, tc := range cases {
			t.Run(network+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				s := fixtures.StartTB(t, fixtures.ProtoHTTP, network, tc.opts)
				tc.check(t, testProber(t, probeConfig(t, s.URL(tc.path), time.Second)))
			})
		}
	}
}

// TestProbeServerAbsent: a response without a Server header.
func TestProbeServerAbsent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 4096)
		c.Read(buf)
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	}()
	p := testProber(t, probeConfig(t, "http://"+ln.Addr().String()+"/", 2*time.Second))
	f, s := p.framing(context.Background())
	if f.Verdict != VerdictContentLength || s.Verdict != VerdictAbsent || s.Server != "" {
		t.Errorf("framing %+v server %+v", f, s)
	}
}

// silentHTTP accepts connections and never answers.
func silentHTTP(t *testing.T, network string) string {
	t.Helper()
	return fixtures.StartRawTB(t, network, nil).URL("http", "/")
}

// TestProbeSilentServer: every check ends within its timeout with "no
// answer" against a server that never answers.
func TestProbeSilentServer(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			t.Parallel()
			url := silentHTTP(t, network)
			start := time.Now()
			r, err := Probe(context.Background(), probeConfig(t, url, timeout))
			if err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el > 6*timeout+20*time.Second {
				t.Errorf("probe took %v", el)
			}
			for _, l := range r.Lines() {
				if l.Verdict != VerdictNoAnswer {
					t.Errorf("%s: %q (%s)", l.Name, l.Verdict, l.Evidence)
				}
			}
		})
	}
}

func TestProbeBadConfig(t *testing.T) {
	tg, _ := sockets.ParseTarget("fcgi://127.0.0.1:9/")
	if _, err := Probe(context.Background(), ProbeConfig{Target: tg}); err == nil {
		t.Error("fcgi target accepted")
	}
	tg, _ = sockets.ParseTarget("http://127.0.0.1:9/")
	if _, err := Probe(context.Background(), ProbeConfig{Target: tg, IdleMax: -1}); err == nil {
		t.Error("negative idle bound accepted")
	}
}
