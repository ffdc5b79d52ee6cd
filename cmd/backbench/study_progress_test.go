package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// progressStudy is a study of 3 rounds of about a second each: the
// built-in HTTP backend, 2 ms a request, on TCP and a Unix socket.
const progressStudy = `question: Does a Unix socket pay over TCP?
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
`

// TestStudyProgressOnAPty runs a study on a pseudo-terminal (script(1),
// its stdout apart): the live line shows the round, the series and the
// requests done, and from the second round an estimated end time; the
// event lines come on lines of their own; the output ends with a line
// saying where the study ended, and a newline.
func TestStudyProgressOnAPty(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to make a pty")
	}
	bin := studyBinary(t)
	f := writeStudy(t, progressStudy)
	out := t.TempDir()
	cmd := exec.Command(script, "-q", "-e", "-c", bin+" study --out "+out+" "+f+" >/dev/null", "/dev/null")
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %q", err, b)
	}
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	show := s[max(0, len(s)-1500):]
	if !strings.HasSuffix(s, "\n") || !regexp.MustCompile(`\nstudy: ended at \d\d:\d\d:\d\d: 3 of 3 rounds in \d+s\n$`).MatchString(s) {
		t.Errorf("the output does not end with the study's end and a newline:\n%q", show)
	}
	if !regexp.MustCompile(`\r\x1b\[Kstudy: round 1 of 3; series transport=(tcp|unix), c=1: \d+/200 requests; the end time comes after the first round`).MatchString(s) {
		t.Errorf("no live line in the first round:\n%q", s[:min(len(s), 1500)])
	}
	if !regexp.MustCompile(`\r\x1b\[Kstudy: round [23] of 3; series transport=(tcp|unix), c=1: \d+/200 requests; ends about \d\d:\d\d:\d\d`).MatchString(s) {
		t.Errorf("no estimated end time in a live line after the first round:\n%q", show)
	}
	// Events on lines of their own (the live line erased first).
	for _, re := range []string{`\nstudy: transport=tcp: started \(pid \d+\), listening on tcp `, `\nstudy: transport=unix: verified\n`,
		`\nstudy: round 2 of 3, ends about \d\d:\d\d:\d\d \(from the rounds so far\)\n`, `\nstudy: transport=unix: stopped\n`} {
		if !regexp.MustCompile(`(\r\x1b\[K)?` + re).MatchString(strings.ReplaceAll(s, "\r\x1b[K", "\n")) {
			t.Errorf("no event line %s:\n%q", re, show)
		}
	}
}
