package studyrun_test

import (
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/studyfile"
	"github.com/backbench/backbench/internal/trials"
)

// TestStudyUntilDecidedStops: 10 ms against 12 ms alone, until decided:
// "slower", and the study stops there, before its budget and max_repeat,
// saying that every pair was decided. (The long truths of until decided,
// TestStudyUntilDecided and TestStudyUntilIdentical, are in cmd/backbench,
// make test-long.)
func TestStudyUntilDecidedStops(t *testing.T) {
	f := writeServeStudy(t, `question: Which delay is slower?
factors:
  delay: [10ms, 12ms]
backends:
  - name: model
    command: [backbench, serve, --protocol, http, --delay, "{delay}", --listen, "{listen}"]
    url: "http://{target}/"
measure:
  kind: bench
  concurrency: [1]
  requests: 30
  until: decided
  budget: 20m
  max_repeat: 40
`)
	var r serveStudyRun
	for try := 1; try <= 2; try++ {
		r = serveStudy(t, f, studyfile.Overrides{})
		r.ok(t)
		if u := r.res.Until; u != nil && u.Stopped == study.StoppedDecided {
			break
		}
		t.Logf("try %d: %+v", try, r.res.Until)
	}
	res := r.res
	if u := res.Until; u == nil || u.Stopped != study.StoppedDecided || u.Decided != 1 || res.Rounds >= 40 || u.Seconds >= 20*60 {
		t.Fatalf("until %+v after %d rounds\n%s", res.Until, res.Rounds, r.text)
	}
	c := res.Comparisons[0]
	if c.Metric != trials.MetricRequestsPerSecond || c.Verdict != trials.Slower || c.DecidedAt != res.Rounds {
		t.Fatalf("comparison %+v after %d rounds", c, res.Rounds)
	}
	if !strings.Contains(res.Answers[0].Conclusion, "slower") || !strings.Contains(r.words, "every pair decided after") {
		t.Errorf("answer:\n%s", r.text)
	}
}
