package studyrun_test

import (
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/studyfile"
	"github.com/backbench/backbench/internal/trials"
)

// TestStudyKeepAliveIgnored: a FastCGI backend that closes every kept
// connection (as Ruby's fcgi.rb does) gets a keep-alive answer that says
// keep-alive did not apply.
func TestStudyKeepAliveIgnored(t *testing.T) {
	f := writeServeStudy(t, `question: Does keep-alive pay for a backend that closes every connection?
factors:
  keepalive: [off, on]
backends:
  - name: closer
    command: [backbench, serve, --protocol, fcgi, --fcgi-keep-conn, ignore, --listen, "{listen}"]
    url: "fcgi://{target}/"
measure:
  kind: bench
  concurrency: [2]
  requests: 100
  repeat: 2
`)
	r := serveStudy(t, f, studyfile.Overrides{})
	r.ok(t)
	if c := r.res.Answers[0].Conclusion; !strings.Contains(c, "keep-alive did not apply") {
		t.Errorf("conclusion: %s", c)
	}
}

// TestStudyTruth: built-in models of 20 ms and 24 ms at concurrency 1 get
// "slower" for the 24 ms one, with an interval that covers the true ratio
// (20/24, a little above with the exchange's own time). A busy machine
// can leave the trials too spread for a verdict: the study is then run
// once more (a broken verdict fails both times).
func TestStudyTruth(t *testing.T) {
	f := writeServeStudy(t, `question: Is a 24 ms backend slower than a 20 ms one?
factors:
  delay: [20ms, 24ms]
backends:
  - name: model
    command: [backbench, serve, --protocol, http, --delay, "{delay}", --listen, "{listen}"]
    url: "http://{target}/"
measure:
  kind: bench
  concurrency: [1]
  requests: 30
  repeat: 8
`)
	var c trials.Comparison
	var r serveStudyRun
	for try := 1; try <= 2; try++ {
		r = serveStudy(t, f, studyfile.Overrides{})
		r.ok(t)
		c = r.res.Comparisons[0]
		if c.Verdict == trials.Slower {
			break
		}
		t.Logf("try %d: verdict %q, ratio %v", try, c.Verdict, c.RatioCI95)
	}
	if c.Metric != trials.MetricRequestsPerSecond || c.Verdict != trials.Slower || c.RatioCI95 == nil {
		t.Fatalf("comparison %+v", c)
	}
	// The true ratio is 20/24 = 0.833 for sleeps of exactly 20 and 24 ms;
	// each request's own time (and a sleep's overshoot, the same on both)
	// moves it towards 1: (20+d)/(24+d) is 0.846 for d = 2 ms, 0.862 for
	// d = 5 ms on a busy machine.
	if lo, hi := c.RatioCI95[0], c.RatioCI95[1]; lo > 0.87 || hi < 0.82 {
		t.Errorf("interval [%.3f, %.3f] does not cover the true ratio (0.833 to 0.86)", lo, hi)
	}
	if !strings.Contains(r.res.Answers[0].Conclusion, "slower") {
		t.Errorf("conclusion: %s", r.res.Answers[0].Conclusion)
	}
}

// lifecycleServeStudy is a study of two configurations: a good built-in
// backend and the one under test (command and options given).
func lifecycleServeStudy(bad string) string {
	return `question: What happens to a bad backend?
factors:
  which: [good, bad]
backends:
  - name: good
    when: {which: good}
    command: [backbench, serve, --protocol, http, --listen, "{listen}"]
    url: "http://{target}/"
` + bad + `
measure:
  kind: sweep
  concurrency: [1, 2]
  requests: 50
  repeat: 1
`
}

// TestStudyLifecycle: a backend that exits at start, one that never
// listens, one that answers 500 to the verification request, one that
// dies at the second level and one that ignores SIGTERM: each is reported
// in one line, the good one is measured, and nothing is left alive (the
// study failed, backbench study's exit status 6, for all but the last).
func TestStudyLifecycle(t *testing.T) {
	for _, tc := range []struct {
		name, backend string
		kind, words   string
	}{
		{"exits at start", `  - name: bad
    command: [sh, -c, "echo cannot open the config file >&2; exit 3", "{listen}"]
    url: "http://{target}/"`, study.FailStart, "cannot open the config file"},
		{"never listens", `  - name: bad
    command: [sh, -c, "exec sleep 30", "{listen}"]
    url: "http://{target}/"
    start_timeout: 1s`, study.FailListen, "did not listen"},
		{"500 at verification", `  - name: bad
    command: [backbench, serve, --protocol, http, --status, "500", --listen, "{listen}"]
    url: "http://{target}/"`, study.FailVerify, "status 500"},
		{"dies at the second level", `  - name: bad
    command: [backbench, serve, --protocol, http, --exit-after, "60", --listen, "{listen}"]
    url: "http://{target}/"`, study.FailLost, "lost"},
		{"ignores SIGTERM", `  - name: bad
    command: [backbench, serve, --protocol, http, --ignore-sigterm, --listen, "{listen}"]
    url: "http://{target}/"
    stop: {grace: 300ms}`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := serveStudy(t, writeServeStudy(t, lifecycleServeStudy(tc.backend)), studyfile.Overrides{})
			if r.failed() != (tc.kind != "") {
				t.Fatalf("failed %v, want %v\ntext:\n%s\nlog:\n%s", r.failed(), tc.kind != "", r.text, r.log)
			}
			var good, bad *study.Configuration
			for i := range r.res.Configurations {
				if c := &r.res.Configurations[i]; c.Levels["which"] == "good" {
					good = c
				} else {
					bad = c
				}
			}
			if good.Failure != "" {
				t.Errorf("the good backend failed: %s", good.Failure)
			}
			if tc.kind == "" {
				if bad.Killed != 1 || bad.Failure != "" {
					t.Errorf("ignoring SIGTERM: killed %d times, failure %q", bad.Killed, bad.Failure)
				}
				return
			}
			if bad.FailureKind != tc.kind && !(tc.kind == study.FailLost && bad.Lost > 0) {
				t.Errorf("failure kind %q, want %q (%s)", bad.FailureKind, tc.kind, bad.Failure)
			}
			text := bad.Failure + " " + strings.Join(bad.Notes, " ")
			if !strings.Contains(text, tc.words) || strings.Contains(bad.Failure, "\n") {
				t.Errorf("failure %q does not say %q in one line", text, tc.words)
			}
			if !strings.Contains(r.words, serveWords(tc.words)) {
				t.Errorf("the output does not say %q:\n%s", tc.words, r.text)
			}
			if !strings.Contains(r.res.Answers[0].Conclusion, "no verdict") {
				t.Errorf("conclusion: %s", r.res.Answers[0].Conclusion)
			}
		})
	}
}

// TestStudyLostRestarted: a backend that dies in every round is restarted
// once, then stopped for good, and the output says both.
func TestStudyLostRestarted(t *testing.T) {
	f := writeServeStudy(t, strings.Replace(lifecycleServeStudy(`  - name: bad
    command: [backbench, serve, --protocol, http, --exit-after, "60", --listen, "{listen}"]
    url: "http://{target}/"`), "repeat: 1", "repeat: 3", 1))
	r := serveStudy(t, f, studyfile.Overrides{})
	if !r.failed() {
		t.Fatalf("the study did not fail\n%s", r.log)
	}
	for _, c := range r.res.Configurations {
		if c.Levels["which"] != "bad" {
			continue
		}
		if c.Starts != 2 || c.Lost != 2 || c.FailureKind != study.FailLost {
			t.Errorf("%d starts, lost %d times, failure %q: %s", c.Starts, c.Lost, c.FailureKind, c.Failure)
		}
		for _, se := range r.res.Series {
			if se.Levels["which"] == "bad" && len(se.Steps) > 0 {
				t.Errorf("runs of the rounds it was lost in were kept: %+v", se.Steps)
			}
		}
		notes := strings.Join(c.Notes, "\n")
		if !strings.Contains(notes, "restarted once") || !strings.Contains(c.Failure, "lost a second time") {
			t.Errorf("notes %q, failure %q", notes, c.Failure)
		}
	}
	if !strings.Contains(r.words, "lost a second time") {
		t.Errorf("the output does not say it:\n%s", r.text)
	}
}
