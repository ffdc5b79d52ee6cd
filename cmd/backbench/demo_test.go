package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMakeDemo runs make demo (into a temporary folder): nothing on
// stderr, one line per bench run with its report in a file, the study's
// answers, and the six-line summary ending with the page's path, which
// exists.
func TestMakeDemo(t *testing.T) {
	onceAcrossEngines(t)
	cmd, bin := makeCmd(t, "demo", "runs the demo (about 30 s)")
	out := filepath.Join(filepath.Dir(bin), "out")
	// Not the MAKEFLAGS of a make test around this test (-w would print
	// directories).
	cmd.Env = append(os.Environ(), "OUT="+out, "MAKEFLAGS=", "MAKELEVEL=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("make demo: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("make demo wrote on stderr:\n%s", stderr.String())
	}
	text := stdout.String()
	runs := regexp.MustCompile(`(?m)^  (fcgi|http) (tcp |unix) keep-alive (on |off) +\d+\.\d+ req/s   (\S+)$`).FindAllStringSubmatch(text, -1)
	if len(runs) != 8 {
		t.Errorf("%d bench lines, want 8:\n%s", len(runs), text)
	}
	for _, r := range runs {
		if data, err := os.ReadFile(r[4]); err != nil || !strings.Contains(string(data), "Complete requests:      2000\n") {
			t.Errorf("%s: %v", r[4], err)
		}
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) < 6 {
		t.Fatalf("output:\n%s", text)
	}
	sum := strings.Join(lines[len(lines)-6:], "\n")
	if !regexp.MustCompile(`^Summary
  bench req/s, keep-alive off: fcgi tcp \d+\.\d+, fcgi unix \d+\.\d+, http tcp \d+\.\d+, http unix \d+\.\d+
  bench req/s, keep-alive on:  fcgi tcp \d+\.\d+, fcgi unix \d+\.\d+, http tcp \d+\.\d+, http unix \d+\.\d+
  sweep: best at c=41: .+, \d+\.\d req/s; chart .*sweep\.png
  study: transport unix against tcp: .+; keepalive on against off: .+
  page: (/\S+/sweep\.html)$`).MatchString(sum) {
		t.Errorf("no summary at the end:\n%s", sum)
	}
	for _, f := range []string{"sweep.html", "study/study.html", "study/study.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	if !strings.Contains(text, "$ backbench study ") || !strings.Contains(text, "\nAnswers (Does a Unix socket pay over TCP") {
		t.Errorf("no study with its answers:\n%s", text)
	}
}
