package studyrun

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/studyfile"
)

// TestSeriesPlan: a series' client-side levels and the study's timeout
// make its plan, as bench's flags would; a bad URL is an error naming the
// series and its URL.
func TestSeriesPlan(t *testing.T) {
	st := &studyfile.Study{Measure: studyfile.Measure{Timeout: 3 * time.Second}}
	cfg := &studyfile.Configuration{Backend: &studyfile.Backend{}}
	tests := []struct {
		name      string
		url       string
		levels    map[string]string
		keepAlive bool
		wantErr   string
	}{
		{"keep-alive on", "http://127.0.0.1:8080/", map[string]string{studyfile.FactorKeepalive: "on"}, true, ""},
		{"keep-alive off", "fcgi://127.0.0.1:9000/app.php", map[string]string{studyfile.FactorKeepalive: "off"}, false, ""},
		{"bad url", "nope://x/", nil, false, "s1 (nope://x/)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &studyfile.Series{Config: cfg, Levels: tc.levels, Label: "s1"}
			p, err := seriesPlan(st, s, Target{URL: tc.url})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.KeepAlive != tc.keepAlive || p.Timeout != 3*time.Second || p.Target.URL != tc.url {
				t.Errorf("plan: keep-alive %v, timeout %v, target %q", p.KeepAlive, p.Timeout, p.Target.URL)
			}
		})
	}
}

// TestSeriesPlanMix: measure's targets and access_log give every series'
// plan its mix.
func TestSeriesPlanMix(t *testing.T) {
	dir := t.TempDir()
	tf, lf := filepath.Join(dir, "t.txt"), filepath.Join(dir, "a.log")
	if err := os.WriteFile(tf, []byte("GET /a\n# weight: 2\n\nGET /b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lf, []byte(`h - - [t] "GET /x HTTP/1.1" 200 1`+"\n"+`h - - [t] "POST /y HTTP/1.1" 200 1`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &studyfile.Configuration{Backend: &studyfile.Backend{}}
	s := &studyfile.Series{Config: cfg, Label: "s1"}
	p, err := seriesPlan(&studyfile.Study{Measure: studyfile.Measure{Targets: tf}}, s, Target{URL: "http://127.0.0.1:8080/"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Labels, []string{"GET /a", "GET /b"}) || !reflect.DeepEqual(p.Weights, []int{2, 1}) {
		t.Errorf("targets: labels %v weights %v", p.Labels, p.Weights)
	}
	p, err = seriesPlan(&studyfile.Study{Measure: studyfile.Measure{AccessLog: lf, ReplayMethods: "GET,POST"}}, s, Target{URL: "fcgi://127.0.0.1:9000/"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Labels, []string{"GET /x", "POST /y"}) || p.Replay == nil || p.Replay.Replayed != 2 {
		t.Errorf("access log: labels %v replay %+v", p.Labels, p.Replay)
	}
}
