package studyfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loadGood parses a file of testdata/good.
func loadGood(t *testing.T, name string) *Study {
	t.Helper()
	s, err := Load(filepath.Join("testdata", "good", name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

func names(cs []Configuration) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func labels(ss []Series) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Label)
	}
	return out
}

// TestExample checks the example of the docs, value by value.
func TestExample(t *testing.T) {
	s := loadGood(t, "example.yaml")
	if s.Question != "Does a Unix socket pay over TCP for FastCGI, with and without keep-alive?" {
		t.Errorf("question %q", s.Question)
	}
	want := []Factor{
		{Name: "transport", Levels: []string{"tcp", "unix"}, Baseline: "tcp", Kind: KindBackend, Line: 4, Col: 3},
		{Name: "keepalive", Levels: []string{"off", "on"}, Baseline: "off", Kind: KindClient, Line: 5, Col: 3},
		{Name: "workers", Levels: []string{"2", "4"}, Baseline: "2", Kind: KindBackend, Line: 6, Col: 3},
	}
	if !reflect.DeepEqual(s.Factors, want) {
		t.Errorf("factors:\n got %+v\nwant %+v", s.Factors, want)
	}
	if !reflect.DeepEqual(s.Exclude, []map[string]string{{"transport": "unix", "workers": "4"}}) {
		t.Errorf("exclude %v", s.Exclude)
	}
	wantB := Backend{
		Name:         "fcgi",
		When:         map[string]string{},
		Command:      []string{"backbench", "serve", "--protocol", "fcgi", "--model", "prefork:{workers}", "--listen", "{listen}"},
		Env:          [][2]string{{"APP_ENV", "bench"}},
		Files:        []File{{Path: "pool.conf", Content: "pm.max_children = {workers}\n"}},
		URL:          "fcgi://{target}/small",
		Verify:       Verify{Status: 200, Body: "Hello"},
		Transport:    "tcp",
		StartTimeout: 30 * time.Second,
		StopSignal:   syscall.SIGTERM,
		Grace:        5 * time.Second,
		DocumentRoot: "/srv/www",
		Headers:      []string{"Host: example.org"},
		Line:         10,
		Col:          5,
	}
	if len(s.Backends) != 1 || !reflect.DeepEqual(s.Backends[0], wantB) {
		t.Errorf("backends:\n got %+v\nwant %+v", s.Backends, wantB)
	}
	wantM := Measure{Kind: "sweep", Levels: []int{1, 51}, Requests: 1000, Duration: 2 * time.Second,
		Repeat: 5, Warmup: 100, Noise: 0.02, NoiseSet: true, Timeout: 30 * time.Second, SLO: []string{"p99<=100ms"}}
	if !reflect.DeepEqual(s.Measure, wantM) {
		t.Errorf("measure:\n got %+v\nwant %+v", s.Measure, wantM)
	}
	cs := s.Configurations()
	if got, want := names(cs), []string{"transport=tcp, workers=2", "transport=tcp, workers=4", "transport=unix, workers=2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("configurations %q, want %q", got, want)
	}
	for _, c := range cs {
		if c.Backend != &s.Backends[0] || c.Transport != c.Levels["transport"] {
			t.Errorf("%s: backend %p transport %s", c.Name, c.Backend, c.Transport)
		}
	}
	ss := s.Series(cs)
	wantL := []string{
		"transport=tcp keepalive=off workers=2", "transport=tcp keepalive=on workers=2",
		"transport=tcp keepalive=off workers=4", "transport=tcp keepalive=on workers=4",
		"transport=unix keepalive=off workers=2", "transport=unix keepalive=on workers=2",
	}
	if got := labels(ss); !reflect.DeepEqual(got, wantL) {
		t.Errorf("series %q, want %q", got, wantL)
	}
	for i, sr := range ss {
		if sr.Config != &cs[i/2] || len(sr.Levels) != 3 || sr.Levels["keepalive"] == "" {
			t.Errorf("series %d: config %p levels %v", i, sr.Config, sr.Levels)
		}
	}
}

// TestGoodFiles checks the other good files: their configurations, series
// and a few values each.
func TestGoodFiles(t *testing.T) {
	for _, tc := range []struct {
		file    string
		configs []string
		series  int
		check   func(t *testing.T, s *Study, cs []Configuration)
	}{
		{"minimal.yaml", []string{"http"}, 2, func(t *testing.T, s *Study, cs []Configuration) {
			if m := s.Measure; m.Kind != MeasureBench || !reflect.DeepEqual(m.Levels, []int{10}) || m.Repeat != 1 || m.Warmup != 0 {
				t.Errorf("measure %+v", m)
			}
			if cs[0].Transport != TransportTCP || len(cs[0].Levels) != 0 {
				t.Errorf("configuration %+v", cs[0])
			}
		}},
		{"servers.yaml", []string{
			"server=fcgi-prefork, workers=2", "server=fcgi-prefork, workers=4", "server=fcgi-prefork, workers=8",
			"server=http-prefork, workers=2", "server=http-prefork, workers=4",
		}, 7, func(t *testing.T, s *Study, cs []Configuration) {
			if s.Factors[1].Baseline != "4" || s.Factors[2].Kind != KindClient || s.Factors[2].Levels[1] != "1.0" {
				t.Errorf("factors %+v", s.Factors)
			}
			for _, c := range cs {
				want := "fcgi"
				if c.Levels["server"] == "http-prefork" {
					want = "starman"
				}
				if c.Backend.Name != want {
					t.Errorf("%s served by %s, want %s", c.Name, c.Backend.Name, want)
				}
			}
			b := s.Backends[1]
			if b.StopSignal != syscall.SIGQUIT || b.Grace != 10*time.Second || b.StartTimeout != time.Minute || b.Verify.Status != 204 {
				t.Errorf("starman %+v", b)
			}
			if !reflect.DeepEqual(b.Env, [][2]string{{"PLACK_ENV", "deployment"}, {"CONF", "{dir}/app.conf"}}) {
				t.Errorf("env %v", b.Env)
			}
			if m := s.Measure; m.Kind != MeasureCapacity || m.Duration != 10*time.Second || !reflect.DeepEqual(m.SLO, []string{"p99<=150ms"}) {
				t.Errorf("measure %+v", m)
			}
		}},
		{"fixedport.yaml", []string{"workers=2", "workers=4"}, 2, func(t *testing.T, s *Study, cs []Configuration) {
			b := s.Backends[0]
			if b.Port != 8080 || !b.Exclusive || !b.Insecure || !reflect.DeepEqual(b.Headers, []string{"Host: example.org"}) {
				t.Errorf("backend %+v", b)
			}
			if got := s.Measure.Levels; !reflect.DeepEqual(got, []int{1, 11, 21, 30, 40, 50}) {
				t.Errorf("levels %v", got)
			}
		}},
		{"unix.yaml", []string{"children=4", "children=8"}, 2, func(t *testing.T, s *Study, cs []Configuration) {
			if cs[0].Transport != TransportUnix || s.Backends[0].Transport != TransportUnix {
				t.Errorf("transport %s", cs[0].Transport)
			}
			if l := s.Measure.Levels; len(l) != 51 || l[0] != 1 || l[49] != 491 || l[50] != 500 {
				t.Errorf("levels %v", l)
			}
		}},
		{"anchors.yaml", []string{"server=thin, transport=unix", "server=puma, transport=unix", "server=puma, transport=tcp"}, 3, func(t *testing.T, s *Study, cs []Configuration) {
			for i, want := range []string{"thin", "puma", "puma-tcp"} {
				b := cs[i].Backend
				if b.Name != want || b.URL != "http://{target}/" || b.Verify.Body != "ok" || b.StopSignal != syscall.SIGQUIT || b.Grace != 2*time.Second {
					t.Errorf("%s: backend %+v, want %s with the anchor's settings", cs[i].Name, b, want)
				}
			}
			if s.Factors[1].Baseline != "tcp" {
				t.Errorf("transport baseline %q", s.Factors[1].Baseline)
			}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s := loadGood(t, tc.file)
			cs := s.Configurations()
			if got := names(cs); !reflect.DeepEqual(got, tc.configs) {
				t.Errorf("configurations %q, want %q", got, tc.configs)
			}
			ss := s.Series(cs)
			if len(ss) != tc.series {
				t.Errorf("%d series, want %d: %q", len(ss), tc.series, labels(ss))
			}
			tc.check(t, s, cs)
		})
	}
}

// TestExpand checks the substitution of placeholders and its errors.
func TestExpand(t *testing.T) {
	vars := map[string]string{"a": "1", "listen": "tcp:127.0.0.1:9"}
	for _, tc := range []struct{ in, out, err string }{
		{"plain", "plain", ""},
		{"{a}", "1", ""},
		{"x{a}y{listen}z", "x1ytcp:127.0.0.1:9z", ""},
		{"{{a}} {{{a}}}", "{a} {{a}}", ""},
		{"server { listen {listen}; }", "server { listen tcp:127.0.0.1:9; }", ""},
		{"{b}", "", "unknown placeholder {b}"},
		{"{a", "{a", ""},
		{"a}", "a}", ""},
		{"{ a }", "{ a }", ""},
		{"{}", "{}", ""},
		{"{{ a }}", "{{ a }}", ""},
		{"${a} $a {a}", "${a} $a 1", ""},
		{`{"workers": {a}}`, `{"workers": 1}`, ""},
		{"<?php if ($x) { echo \"{$x}\"; }}", "<?php if ($x) { echo \"{$x}\"; }}", ""},
		{"{a-b} {9a}", "", "unknown placeholder {a-b}"},
	} {
		got, err := Expand(tc.in, vars)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Expand(%q): error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.out {
			t.Errorf("Expand(%q) = %q, %v; want %q", tc.in, got, err, tc.out)
		}
	}
}

// TestVars checks the built-in placeholders over TCP and a Unix socket.
func TestVars(t *testing.T) {
	s := loadGood(t, "example.yaml")
	cs := s.Configurations()
	tcp := cs[0].Vars("tcp", "127.0.0.1:9001", "/tmp/d")
	want := map[string]string{
		"transport": "tcp", "workers": "2", "listen": "tcp:127.0.0.1:9001", "addr": "127.0.0.1:9001",
		"target": "127.0.0.1:9001", "port": "9001", "socket": "", "dir": "/tmp/d", "name": "transport=tcp, workers=2",
	}
	if !reflect.DeepEqual(tcp, want) {
		t.Errorf("tcp vars\n got %v\nwant %v", tcp, want)
	}
	unix := cs[2].Vars("unix", "/tmp/d/s.sock", "/tmp/d")
	want = map[string]string{
		"transport": "unix", "workers": "2", "listen": "unix:/tmp/d/s.sock", "addr": "/tmp/d/s.sock",
		"target": "unix:/tmp/d/s.sock:", "port": "", "socket": "/tmp/d/s.sock", "dir": "/tmp/d", "name": "transport=unix, workers=2",
	}
	if !reflect.DeepEqual(unix, want) {
		t.Errorf("unix vars\n got %v\nwant %v", unix, want)
	}
	b := cs[2].Backend
	for _, tmpl := range append(append([]string{b.URL, b.Files[0].Content}, b.Command...), b.Headers...) {
		if _, err := Expand(tmpl, unix); err != nil {
			t.Errorf("Expand(%q): %v", tmpl, err)
		}
	}
	if u, _ := Expand(b.URL, unix); u != "fcgi://unix:/tmp/d/s.sock:/small" {
		t.Errorf("url %q", u)
	}
}

// TestLoadMissing checks that Load passes on the error of a file it cannot
// read.
func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.yaml"))
	if !os.IsNotExist(err) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// TestBackendExpand checks a backend expanded for a configuration, and a
// file path that a level takes out of the configuration's directory.
func TestBackendExpand(t *testing.T) {
	s := loadGood(t, "servers.yaml")
	cs := s.Configurations()
	c := cs[len(cs)-1]
	b, err := c.Backend.Expand(c.Vars("tcp", "127.0.0.1:8001", "/run/x"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"starman", "--workers", "4", "--listen", ":8001", "app.psgi"}; !reflect.DeepEqual(b.Command, want) {
		t.Errorf("command %q, want %q", b.Command, want)
	}
	if b.Env[1] != [2]string{"CONF", "/run/x/app.conf"} || b.URL != "http://127.0.0.1:8001/" {
		t.Errorf("env %v url %q", b.Env, b.URL)
	}
	if want := "# { literal braces }, {name}, ${HOME} and the name server=http-prefork, workers=4\nworkers = 4\n"; b.Files[0].Content != want {
		t.Errorf("content %q, want %q", b.Files[0].Content, want)
	}
	if c.Backend.Command[2] != "{workers}" {
		t.Errorf("Expand changed the templates: %q", c.Backend.Command)
	}
	bad := Backend{Name: "x", Files: []File{{Path: "{w}/f"}}}
	if _, err := bad.Expand(map[string]string{"w": ".."}); err == nil || !strings.Contains(err.Error(), "inside") {
		t.Errorf("a path out of the directory: %v", err)
	}
}

// TestNamesQuoted checks that levels with separators are quoted in names
// and labels, so that two configurations never share one.
func TestNamesQuoted(t *testing.T) {
	s, err := Parse("q.yaml", []byte(`question: q
factors:
  f: ["a, g=1", a]
  g: ["2", "1, g=2"]
  keepalive: [on, off]
backends:
  - name: b
    command: [x, "{listen}", "{f}", "{g}"]
    url: http://{target}/
measure: {kind: bench, concurrency: 1, requests: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	cs := s.Configurations()
	want := []string{`f="a, g=1", g=2`, `f="a, g=1", g="1, g=2"`, `f=a, g=2`, `f=a, g="1, g=2"`}
	if got := names(cs); !reflect.DeepEqual(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
	if got := s.Series(cs)[0].Label; got != `f="a, g=1" g=2 keepalive=on` {
		t.Errorf("label %q", got)
	}
}
