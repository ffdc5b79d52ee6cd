package studyfile

import (
	"path/filepath"
	"testing"
)

// TestMixKeys: measure's targets and access_log are read relative to the
// study file's directory, and their files are read when the study is.
func TestMixKeys(t *testing.T) {
	head := "question: q?\nfactors:\n  keepalive: [off, on]\nbackends:\n  - name: http\n    command: [backbench, serve, --listen, \"{listen}\"]\n    url: http://{target}/\n"
	path := filepath.Join("testdata", "mix", "study.yaml")
	s, err := Parse(path, []byte(head+"measure: {kind: bench, concurrency: 2, requests: 10, targets: targets.txt}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("testdata", "mix", "targets.txt"); s.Measure.Targets != want || s.Measure.AccessLog != "" {
		t.Errorf("targets %q, want %q", s.Measure.Targets, want)
	}
	s, err = Parse(path, []byte(head+"measure: {kind: bench, concurrency: 2, requests: 10, access_log: access.log, replay_methods: [get, post], log_format: combined}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Measure; m.AccessLog != filepath.Join("testdata", "mix", "access.log") || m.ReplayMethods != "GET,POST" || m.LogFormat != "combined" {
		t.Errorf("measure %+v", m)
	}
	if _, err := Parse(path, []byte(head+"measure: {kind: bench, concurrency: 2, requests: 10, access_log: access.log, targets: targets.txt}\n")); err == nil {
		t.Error("targets and access_log together accepted")
	}
}
