package plan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	httpURL = "http://127.0.0.1:9/x"
	fcgiURL = "fcgi://127.0.0.1:9/x"
)

// TestBuildRefuses holds every rule of Build to its message: each case
// changes the defaults of a bench and wants the one error, a usage error
// (*Error), before any connection.
func TestBuildRefuses(t *testing.T) {
	dir := t.TempDir()
	body := filepath.Join(dir, "body")
	noPID := filepath.Join(dir, "nopid")
	if err := os.WriteFile(body, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noPID, []byte("none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	cases := []struct {
		name string
		set  func(o *Options)
		want string // the message; a trailing "*" matches a prefix
	}{
		{"n zero", func(o *Options) { o.Requests = 0 }, "-n 0: the number of requests must be at least 1"},
		{"c zero", func(o *Options) { o.Concurrency = 0 }, "-c 0: the concurrency must be at least 1"},
		{"c too high", func(o *Options) { o.Concurrency = 2_000_000 }, "-c 2000000: the concurrency is at most 1000000"},
		{"c over n", func(o *Options) { o.Requests, o.Concurrency = 5, 10 }, "-c 10 is greater than -n 5: cannot use more workers than requests"},
		{"timeout", func(o *Options) { o.Timeout = 0 }, "-s must be greater than 0 seconds"},
		{"verbosity", func(o *Options) { o.Verbosity = -1 }, "-v -1: the verbosity must be 0 or more"},
		{"rate", func(o *Options) { o.Rate = -1 }, "--rate -1: want requests per second from 0 to 10000000"},
		{"threads", func(o *Options) { o.Threads = -1 }, "--threads -1: want from 1 to 1024 (0: every CPU)"},
		{"start-at past", func(o *Options) { o.StartAt = time.Unix(1, 0) }, "--start-at 1970-01-01T*"},
		{"bad slo", func(o *Options) { o.SLO = []string{"p42<=x"} }, "--slo: *"},
		{"header without colon", func(o *Options) { o.Headers = []string{"NoColon"} }, `bad header "NoColon": want 'Name: value'`},
		{"header name", func(o *Options) { o.Headers = []string{"Bad Name: x"} }, `bad header "Bad Name: x": the name must be a non-empty token`},
		{"header value", func(o *Options) { o.Headers = []string{"A: b\x00"} }, `bad header "A: b\x00": the value has a control byte`},
		{"header file", func(o *Options) { o.Headers = []string{"@" + missing} }, "cannot read -H @" + missing + ": *"},
		{"-T without body", func(o *Options) { o.ContentType = "text/plain" }, "-T needs a body (-p FILE or -u FILE)"},
		{"unreadable -p", func(o *Options) { o.PostFile = missing }, "cannot read -p file: *"},
		{"unreadable -u", func(o *Options) { o.PutFile = missing }, "cannot read -u file: *"},
		{"-p - without stdin", func(o *Options) { o.PostFile, o.Stdin = "-", nil }, "cannot read -p file: no standard input"},
		{"-X", func(o *Options) { o.Proxy = "127.0.0.1:3128" }, "-X 127.0.0.1:3128: backbench has no proxy mode, it talks to the backend directly; to measure the proxy, bench its own URL"},
		{"-p and -u", func(o *Options) { o.PostFile, o.PutFile = body, body }, "-p and -u both give a body: choose one"},
		{"-i and -p", func(o *Options) { o.Head, o.PostFile = true, body }, "-i (HEAD) sends no body: drop -p or -u"},
		{"-i and -m", func(o *Options) { o.Head, o.Method = true, "GET" }, "-i and -m GET contradict each other"},
		{"bad -C", func(o *Options) { o.Cookies = []string{"nocookie"} }, `bad -C "nocookie": want name=value`},
		{"bad -A", func(o *Options) { o.BasicAuth = "nocolon" }, `bad -A "nocolon": want user:password`},
		{"bad method", func(o *Options) { o.Method = "GE T" }, `bad method "GE T"`},
		{"param on http", func(o *Options) { o.Params = []string{"A=1"} }, "*fcgi:// targets only*"},
		{"bad param", func(o *Options) { o.URL, o.Params = fcgiURL, []string{"NOEQUALS"} }, `bad --param "NOEQUALS": want NAME=VALUE`},
		{"insecure on http", func(o *Options) { o.Insecure = true }, "--insecure applies to https:// targets only"},
		{"range and upstream", func(o *Options) {
			o.URL, o.Upstreams = "http://127.0.0.1:{9..10}/x", []string{"tcp:127.0.0.1:11"}
		}, "use either a {A..B} port range or --upstream, not both"},
		{"bad upstream", func(o *Options) { o.Upstreams = []string{"udp:x"} }, "--upstream: *"},
		{"bad balance", func(o *Options) { o.Balance = "random" }, "--balance: *"},
		{"unix socket and upstreams", func(o *Options) { o.Upstreams, o.UnixSocket = []string{"tcp:127.0.0.1:11"}, "/s.sock" },
			"--unix-socket and several upstreams do not mix; use --upstream unix:/path"},
		{"bad unix socket", func(o *Options) { o.UnixSocket = "../s.sock" }, `bad --unix-socket "../s.sock"`},
		{"unreadable pidfile", func(o *Options) { o.BackendPIDFile = missing }, "cannot read --backend-pidfile: *"},
		{"no PID in pidfile", func(o *Options) { o.BackendPIDFile = noPID }, "--backend-pidfile " + noPID + ": no PID in it"},
		{"fpm-status path", func(o *Options) { o.URL, o.FPMStatus = fcgiURL, "status" }, `--fpm-status "status": want a path starting with /`},
		{"fpm-status on http", func(o *Options) { o.FPMStatus = "/status" }, "*--fpm-status*"},
		{"unknown scheme", func(o *Options) { o.URL = "ftp://127.0.0.1/" }, "*unknown scheme*"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := Defaults(httpURL)
			o.RequestsSet = true
			c.set(&o)
			_, err := o.Build()
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a *plan.Error", err, err)
			}
			if !match(err.Error(), c.want) {
				t.Errorf("error %q, want %q", err, c.want)
			}
		})
	}
}

// match says whether msg is want, or with want's "*" at an end, starts
// or ends with the rest.
func match(msg, want string) bool {
	pre, suf := strings.HasSuffix(want, "*"), strings.HasPrefix(want, "*")
	w := strings.TrimSuffix(strings.TrimPrefix(want, "*"), "*")
	switch {
	case pre && suf:
		return strings.Contains(msg, w)
	case pre:
		return strings.HasPrefix(msg, w)
	case suf:
		return strings.HasSuffix(msg, w)
	}
	return msg == w
}

// TestBuildRequest: the method, headers and body that the options make.
func TestBuildRequest(t *testing.T) {
	o := Defaults(httpURL)
	o.Headers = []string{"X-A: 1"}
	o.Cookies = []string{"a=1", "b=2"}
	o.BasicAuth = "user:pass"
	o.PostFile = "-"
	o.Stdin = func() ([]byte, error) { return []byte("body"), nil }
	l, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	p := l.Plan
	if p.Method != "POST" || string(p.Body) != "body" || p.ContentType != "text/plain" {
		t.Errorf("method %q, body %q, content type %q", p.Method, p.Body, p.ContentType)
	}
	want := [][2]string{{"X-A", "1"}, {"Cookie", "a=1; b=2"}, {"Authorization", "Basic dXNlcjpwYXNz"}}
	if len(p.Headers) != len(want) {
		t.Fatalf("headers %q, want %q", p.Headers, want)
	}
	for i := range want {
		if p.Headers[i] != want[i] {
			t.Errorf("header %d: %q, want %q", i, p.Headers[i], want[i])
		}
	}
	o = Defaults(httpURL)
	o.Head = true
	if l, err = o.Build(); err != nil || l.Method != "HEAD" {
		t.Errorf("-i: %v, method %q", err, l.Method)
	}
}

// TestBuildLimits: -t alone has no count limit; -n with -t keeps it.
func TestBuildLimits(t *testing.T) {
	o := Defaults(httpURL)
	o.Duration = time.Second
	l, err := o.Build()
	if err != nil || l.Requests != 0 || l.Duration != time.Second {
		t.Fatalf("-t 1: %v, requests %d, duration %v", err, l.Requests, l.Duration)
	}
	o.RequestsSet, o.Requests = true, 5
	if l, err = o.Build(); err != nil || l.Requests != 5 {
		t.Fatalf("-n 5 -t 1: %v, requests %d", err, l.Requests)
	}
}

// TestHeaderFile: -H @FILE reads one header a line, comments and blank
// lines skipped.
func TestHeaderFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "h")
	if err := os.WriteFile(f, []byte("# c\nX-A: 1\r\n\nX-B: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Defaults(httpURL)
	o.Headers = []string{"@" + f}
	l, err := o.Build()
	if err != nil || len(l.Headers) != 2 || l.Headers[1] != [2]string{"X-B", "2"} {
		t.Fatalf("%v, headers %q", err, l.Headers)
	}
}

// TestForSeries: a sweep's series gets the FastCGI options only when it
// is FastCGI, --insecure only when it is https.
func TestForSeries(t *testing.T) {
	o := Defaults("")
	o.Params, o.DocumentRoot, o.Insecure = []string{"A=1"}, "/srv", true
	h, tls := o.ForSeries(httpURL)
	if h.Params != nil || h.DocumentRoot != "" || h.Insecure || tls || h.URL != httpURL {
		t.Errorf("http series: %+v, tls %v", h, tls)
	}
	f, _ := o.ForSeries(fcgiURL)
	if len(f.Params) != 1 || f.DocumentRoot != "/srv" {
		t.Errorf("fcgi series: %+v", f)
	}
	if s, tls := o.ForSeries("https://127.0.0.1:9/"); !s.Insecure || !tls {
		t.Errorf("https series: insecure %v, tls %v", s.Insecure, tls)
	}
}

// TestCheckStartAt: at most a second in the past, at most a day ahead.
func TestCheckStartAt(t *testing.T) {
	now := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Time{}, ""},
		{now.Add(-500 * time.Millisecond), ""},
		{now.Add(time.Hour), ""},
		{now.Add(-2 * time.Second), "--start-at 2026-12-01T03:59:58Z is 2.0 s in the past (more than 1 s): give a time ahead"},
		{now.Add(25 * time.Hour), "--start-at 2026-12-02T05:00:00Z is more than 24h0m0s ahead (Unix seconds, not milliseconds?)"},
	} {
		err := CheckStartAt(c.at, now)
		if (err == nil) != (c.want == "") || (err != nil && err.Error() != c.want) {
			t.Errorf("%v: %v, want %q", c.at, err, c.want)
		}
	}
}

// TestCheckFiles: a concurrency the file limit holds passes.
func TestCheckFiles(t *testing.T) {
	if err := CheckFiles("-c 1", 1); err != nil {
		t.Fatal(err)
	}
	if err := CheckFiles("-c 1000000000", 1_000_000_000); err == nil || !strings.HasPrefix(err.Error(), "-c 1000000000 needs ") {
		t.Errorf("%v", err)
	}
}

func TestSplitLabel(t *testing.T) {
	for _, tc := range []struct{ arg, label, url string }{
		{"http://h/?a=b", "", "http://h/?a=b"},
		{"fast=fcgi://h/x.php?a=b", "fast", "fcgi://h/x.php?a=b"},
		{" fcgi tcp =fcgi://unix:/s.sock:/", "fcgi tcp", "fcgi://unix:/s.sock:/"},
		{"x=y", "x", "y"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			l, u, err := SplitLabel(tc.arg)
			if err != nil || l != tc.label || u != tc.url {
				t.Errorf("got %q %q %v", l, u, err)
			}
		})
	}
	if _, _, err := SplitLabel(" =http://h/"); err == nil || err.Error() != `sweep: empty label in " =http://h/" (want LABEL=URL)` {
		t.Errorf("empty label: %v", err)
	}
}

// TestKeepAliveModes: on, off, both (off,on), a repeat refused, and -k
// with off.
func TestKeepAliveModes(t *testing.T) {
	for _, c := range []struct {
		modes string
		k     bool
		want  string
	}{
		{"", false, "[false]"}, {"", true, "[true]"}, {"on", false, "[true]"}, {"both", false, "[false true]"},
		{"on,off", false, "[true false]"},
		{"on,on", false, `sweep: bad --keepalive-modes "on,on": want on, off, or on,off`},
		{"maybe", false, `sweep: bad --keepalive-modes "maybe": want on, off, or on,off`},
		{"on,off", true, "sweep: -k and --keepalive-modes on,off contradict each other"},
	} {
		kas, err := KeepAliveModes(c.modes, c.k)
		got := fmt.Sprint(kas)
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%q -k=%v: %s, want %s", c.modes, c.k, got, c.want)
		}
	}
}

// TestSweepSeries: labels, keep-alive copies, backends and the PIDs of a
// label.
func TestSweepSeries(t *testing.T) {
	o := SweepOptions{Load: Defaults(""), KeepAliveModes: "on,off", Levels: "1",
		Args: []string{"a=" + httpURL, fcgiURL}}
	o.Load.Requests = 10
	s, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, se := range s.Series {
		got = append(got, fmt.Sprintf("%s/%s/%v", se.Label, s.Backends[i], se.Plan.KeepAlive))
	}
	if want := "[a ka/a/true a no-ka/a/false fcgi/tcp ka//true fcgi/tcp no-ka//false]"; fmt.Sprint(got) != want {
		t.Errorf("series %v, want %s", got, want)
	}
	if !s.Names["a"] || !s.Names["a ka"] {
		t.Errorf("names %v", s.Names)
	}
	if s.Baseline != "a ka" || fmt.Sprint(s.Config.Levels) != "[1]" || s.Config.Requests != 10 || !s.Config.EndUnreachable ||
		s.Config.Warmup.Requests != 1 {
		t.Errorf("baseline %q, config %+v", s.Baseline, s.Config)
	}
	for _, c := range []struct {
		set  func(o *SweepOptions)
		want string
	}{
		{func(o *SweepOptions) { o.Args = []string{"on"} }, `sweep: "on" is not a URL; --keepalive takes no value, --keepalive-modes on does`},
		{func(o *SweepOptions) { o.Levels = "" }, "sweep: --concurrency SPEC is required (e.g. 1:500:10 or 1,2,4,8)"},
		{func(o *SweepOptions) { o.Levels = "0" }, `sweep: concurrency spec "0": bad level "0" (want 1 to 1000000)`},
		{func(o *SweepOptions) { o.Warmup = -1 }, "sweep: --warmup -1: want 0 or more requests"},
		{func(o *SweepOptions) { o.Baseline = "z" }, `sweep: --baseline "z" is not a series label (a ka, a no-ka, fcgi/tcp ka, fcgi/tcp no-ka)`},
		{func(o *SweepOptions) { o.Levels = "1,20" }, "sweep: -n 10 is less than the highest level 20: cannot use more workers than requests"},
		{func(o *SweepOptions) { o.Args = []string{"a=" + httpURL, "a=" + httpURL} }, `sweep: two series are labelled "a ka" (use LABEL=URL)`},
		{func(o *SweepOptions) { o.BackendPIDs = []string{"b=1"} }, `sweep: --backend-pid(file) b=...: no series is labelled "b"`},
		{func(o *SweepOptions) { o.BackendPIDs = []string{"x"} }, `sweep: bad --backend-pid "x": want PID or LABEL=PID`},
		{func(o *SweepOptions) { o.BackendPIDFiles = []string{"/a", "/b"} }, "sweep: two --backend-pidfile for every series (/a, /b): give one, or LABEL=FILE"},
		{func(o *SweepOptions) { o.BackendPIDFiles = []string{"a="} }, `sweep: bad --backend-pidfile "a=": want FILE or LABEL=FILE, one per label`},
		{func(o *SweepOptions) { o.Load.Insecure = true }, "--insecure applies to https:// targets only"},
	} {
		so := o
		c.set(&so)
		if _, err := so.Build(); err == nil || err.Error() != c.want {
			t.Errorf("%v, want %s", err, c.want)
		}
	}
}

// TestStages: --stages and --rate-stages set the time limit, and the
// concurrency or the mean rate; what contradicts them is refused.
func TestStages(t *testing.T) {
	o := Defaults(httpURL)
	o.StageSpec, o.Ramp = "1s:2,1s:4", true
	l, err := o.Build()
	if err != nil || l.Duration != 2*time.Second || l.Concurrency != 4 || len(l.Plan.Stages) != 2 || !l.Ramp || l.Requests != 0 {
		t.Fatalf("--stages: %v, %+v", err, l)
	}
	if o.Duration != 0 || o.Concurrency != 1 {
		t.Errorf("Build changed its options: %+v", o)
	}
	o = Defaults(httpURL)
	o.RateStageSpec = "1s:100,1s:300"
	if l, err = o.Build(); err != nil || l.Rate != 200 || l.Duration != 2*time.Second {
		t.Fatalf("--rate-stages: %v, rate %g", err, l.Rate)
	}
	for _, c := range []struct {
		set  func(o *Options)
		want string
	}{
		{func(o *Options) { o.RateStageSpec = "1s:4" }, "bench: --stages and --rate-stages: give one (connections in the closed model, or rates in the open one)"},
		{func(o *Options) { o.StageSpec, o.Ramp = "", true }, "bench: --ramp needs --stages or --rate-stages"},
		{func(o *Options) { o.StageSpec = "1s:-4" }, "bench: --stages: *"},
		{func(o *Options) { o.RequestsSet = true }, "bench: --stages sets the run's length: not with -n"},
		{func(o *Options) { o.TimeLimitSet, o.Duration = true, 2*time.Second }, "bench: -t 2s differs from the stages' total length 1s"},
		{func(o *Options) { o.RateSet = true }, "bench: --stages with --rate: give the rates as --rate-stages"},
		{func(o *Options) { o.StageSpec, o.RateStageSpec = "", "1s:0" }, "bench: --rate-stages 1s:0 asks for no request"},
		{func(o *Options) { o.StageSpec = "1s:0" }, "bench: --stages 1s:0: want concurrencies from 0 to 1000000, one of them at least 1"},
		{func(o *Options) { o.ConcurrencySet, o.Concurrency = true, 2 }, "bench: -c 2 is below the stages' largest concurrency 4"},
	} {
		o := Defaults(httpURL)
		o.StageSpec = "1s:4"
		c.set(&o)
		if _, err := o.Build(); err == nil || !match(err.Error(), c.want) {
			t.Errorf("%v, want %s", err, c.want)
		}
	}
}
