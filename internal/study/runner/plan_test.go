package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/study/studyfile"
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
