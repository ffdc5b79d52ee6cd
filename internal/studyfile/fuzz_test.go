package studyfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse. It must not panic; an error is
// an *Error of one line with a position; a study it accepts has as many
// configurations as the combinations of backend-side levels that no
// exclusion matches, each served by the first backend whose when matches
// it, and every template of the backend expands with the configuration's
// placeholders. Expand must not panic on any template.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"good", "bad"} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "fuzz.yaml"
		_, _ = Expand(string(data), map[string]string{"a": "1", "listen": "x"})
		s, err := Parse(path, data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v, not an *Error", err, err)
			}
			if e.File != path || e.Line < 1 || e.Col < 1 || e.Msg == "" {
				t.Fatalf("error without a position or a message: %+v", e)
			}
			if strings.ContainsAny(err.Error(), "\n\r\u0085\u2028\u2029") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		checkStudy(t, s)
	})
}

// checkStudy checks the configurations and series of a parsed study
// against a count of its own.
func checkStudy(t *testing.T, s *Study) {
	t.Helper()
	var backend, client []Factor
	for _, fac := range s.Factors {
		if len(fac.Levels) < 2 {
			t.Fatalf("factor %s with %d levels", fac.Name, len(fac.Levels))
		}
		if fac.Kind == KindBackend {
			backend = append(backend, fac)
		} else {
			client = append(client, fac)
		}
	}
	matches := func(ex map[string]string, levels map[string]string) bool {
		for k, v := range ex {
			if got, ok := levels[k]; !ok || got != v {
				return false
			}
		}
		return true
	}
	// Every combination of backend-side levels, by counting in a mixed
	// radix.
	var want []map[string]string
	total := 1
	for _, fac := range backend {
		total *= len(fac.Levels)
	}
	for i := 0; i < total; i++ {
		levels, rest := map[string]string{}, i
		for j := len(backend) - 1; j >= 0; j-- {
			n := len(backend[j].Levels)
			levels[backend[j].Name] = backend[j].Levels[rest%n]
			rest /= n
		}
		out := false
		for _, ex := range s.Exclude {
			out = out || matches(ex, levels)
		}
		if !out {
			want = append(want, levels)
		}
	}
	cs := s.Configurations()
	if len(cs) != len(want) || len(cs) == 0 {
		t.Fatalf("%d configurations, want %d", len(cs), len(want))
	}
	seen := map[string]bool{}
	for i, c := range cs {
		if !matches(want[i], c.Levels) || len(c.Levels) != len(want[i]) {
			t.Fatalf("configuration %d: %v, want %v", i, c.Levels, want[i])
		}
		if seen[c.Name] || c.Name == "" {
			t.Fatalf("configuration name %q empty or twice", c.Name)
		}
		seen[c.Name] = true
		first := -1
		for j := range s.Backends {
			if matches(s.Backends[j].When, c.Levels) {
				first = j
				break
			}
		}
		if first < 0 || c.Backend != &s.Backends[first] {
			t.Fatalf("configuration %s: backend %v, want the first that matches (%d)", c.Name, c.Backend, first)
		}
		if c.Transport != TransportTCP && c.Transport != TransportUnix {
			t.Fatalf("configuration %s: transport %q", c.Name, c.Transport)
		}
		addr := "127.0.0.1:4000"
		if c.Transport == TransportUnix {
			addr = "/tmp/x/s.sock"
		}
		vars := c.Vars(c.Transport, addr, "/tmp/x")
		x, err := c.Backend.Expand(vars)
		if err != nil && !strings.Contains(err.Error(), "inside the configuration's directory") {
			t.Fatalf("configuration %s: %v", c.Name, err)
		}
		if err == nil && (len(x.Command) != len(c.Backend.Command)) {
			t.Fatalf("configuration %s: expanded %+v", c.Name, x)
		}
	}
	clients := 1
	for _, fac := range client {
		clients *= len(fac.Levels)
	}
	ss := s.Series(cs)
	if len(ss) == 0 || len(ss) > len(cs)*clients {
		t.Fatalf("%d series of %d configurations and %d client combinations", len(ss), len(cs), clients)
	}
	labels := map[string]bool{}
	for _, sr := range ss {
		if len(sr.Levels) != len(s.Factors) || labels[sr.Label] {
			t.Fatalf("series %q: %d levels of %d factors, or its label twice", sr.Label, len(sr.Levels), len(s.Factors))
		}
		labels[sr.Label] = true
		for _, ex := range s.Exclude {
			if matches(ex, sr.Levels) {
				t.Fatalf("series %q is excluded by %v", sr.Label, ex)
			}
		}
	}
	if m := s.Measure; m.Repeat < 1 || m.Warmup < 0 || (m.Requests <= 0 && m.Duration <= 0) {
		t.Fatalf("measure %+v", m)
	}
}
