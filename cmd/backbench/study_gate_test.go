package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gateStudy writes a study file of one client-side factor (keep-alive
// off and on: one built-in FastCGI backend, two series) whose backend
// sleeps delay a request, 4 rounds (the least for a verdict).
func gateStudy(t *testing.T, delay string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gate.yaml")
	src := fmt.Sprintf(`question: Does the application keep its speed?
factors:
  keepalive: [off, on]
backends:
  - name: app
    command: [backbench, serve, --protocol, fcgi, --model, threaded, --delay, %s, --listen, "{listen}"]
    url: "fcgi://{target}/"
measure:
  kind: bench
  concurrency: [2]
  requests: 60
  repeat: 4
`, delay)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStudyAgainst: study --against OLD/study.json --fail-on trips (exit
// status 4) on the study rerun against a backend 3× slower (30 ms a
// request against 10 ms), and passes (exit 0) on the study rerun against
// the same backend; compare --fail-on on the two study.json files says
// the same. The rule "req/s slower by 50%" trips only on an interval
// wholly below 0.5 (the 3× slower run's is about 0.33), so that two runs
// of one backend never trip it by chance; "undecided pass" lets an
// undecided comparison pass.
func TestStudyAgainst(t *testing.T) {
	bin := studyBinary(t)
	const rules = "req/s slower by 50%, undecided pass"
	old := runStudy(t, gateStudy(t, "10ms"))
	if old.code != 0 {
		t.Fatalf("the old study: exit %d\n%s\n%s", old.code, old.stdout, old.stderr)
	}
	oldFile := filepath.Join(old.dir, "study.json")
	for _, tc := range []struct {
		name, delay string
		want        int
	}{
		{"3x slower", "30ms", exitRegression},
		{"same backend", "10ms", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runStudy(t, "--against", oldFile, "--fail-on", rules, gateStudy(t, tc.delay))
			if r.code != tc.want {
				t.Fatalf("study --against: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.want, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "Against "+oldFile) || !strings.Contains(r.words, "Gate:") {
				t.Errorf("the text does not give the comparison and the gate:\n%s", r.stdout)
			}
			if tc.want == exitRegression && !strings.Contains(r.words, "tripped") {
				t.Errorf("the text does not say what tripped:\n%s", r.stdout)
			}
			cmd := exec.Command(bin, "compare", "--fail-on", rules, oldFile, filepath.Join(r.dir, "study.json"))
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Errorf("compare --fail-on on the two study.json: exit %d, want %d\n%s", code, tc.want, out)
			}
		})
	}
	// A saved result that is not a study is refused before anything
	// starts.
	r := runStudy(t, "--against", filepath.Join("..", "..", "internal", "report", "page", "testdata", "sweep.json"), gateStudy(t, "10ms"))
	if r.code != 2 || !strings.Contains(r.stderr, "not a study.json") {
		t.Errorf("--against a sweep: exit %d\n%s", r.code, r.stderr)
	}
}
