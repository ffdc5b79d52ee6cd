package studyrun_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/studyfile"
)

// TestStudyProgressLog: the runner's progress lines (Options.Log,
// backbench study's stderr off a terminal) are event lines only (no live
// line, no carriage return), the rounds' with their estimated end. A
// study of 3 rounds of about a second each: the built-in HTTP backend,
// 2 ms a request, on TCP and a Unix socket.
func TestStudyProgressLog(t *testing.T) {
	f := writeServeStudy(t, `question: Does a Unix socket pay over TCP?
factors:
  transport: [tcp, unix]
backends:
  - name: http
    command: [backbench, serve, --protocol, http, --model, serial, --delay, 2ms, --listen, "{listen}"]
    url: "http://{target}/"
    verify: {status: 200}
measure:
  kind: bench
  concurrency: [1]
  requests: 200
  repeat: 3
`)
	r := serveStudy(t, f, studyfile.Overrides{})
	r.ok(t)
	got := r.log
	if strings.Contains(got, "\r") || strings.Contains(got, "\x1b") || strings.Contains(got, "requests;") {
		t.Errorf("a live line in the progress lines:\n%q", got)
	}
	for _, re := range []string{`(?m)^study: round 1 of 3$`, `(?m)^study: round 3 of 3, ends about \d\d:\d\d:\d\d \(from the rounds so far\)$`,
		`(?m)^study: transport=tcp: verified$`, `(?m)^study: transport=tcp: stopped$`} {
		if !regexp.MustCompile(re).MatchString(got) {
			t.Errorf("the progress lines lack %s:\n%s", re, got)
		}
	}
}
