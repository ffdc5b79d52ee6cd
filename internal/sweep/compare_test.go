package sweep

import (
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// TestFactorWords: the series of one label are told apart by the factors
// in which their URLs differ, the HTTP version only between two HTTP
// URLs (FastCGI against HTTP is the protocol).
func TestFactorWords(t *testing.T) {
	fcgiTCP := trials.Factors{Protocol: "fcgi", Transport: "tcp", Upstreams: 1}
	fcgiUnix := trials.Factors{Protocol: "fcgi", Transport: "unix", Upstreams: 1}
	httpTCP := trials.Factors{Protocol: "http", Transport: "tcp", HTTPVersion: "1.1", Upstreams: 1}
	httpsTCP := trials.Factors{Protocol: "http", Transport: "tcp", HTTPVersion: "1.1", TLS: true, Upstreams: 1}
	for _, tc := range []struct {
		f    trials.Factors
		fs   []trials.Factors
		want string
	}{
		{fcgiUnix, []trials.Factors{fcgiTCP, fcgiUnix}, " unix"},
		{fcgiTCP, []trials.Factors{fcgiTCP, httpTCP}, " fcgi"},
		{httpTCP, []trials.Factors{fcgiTCP, httpTCP}, " http"},
		{httpsTCP, []trials.Factors{httpTCP, httpsTCP}, " tls"},
		{fcgiTCP, []trials.Factors{fcgiTCP}, ""},
	} {
		if got := FactorWords(tc.f, tc.fs); got != tc.want {
			t.Errorf("FactorWords(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

// TestJudge checks --slo's judgement of a sweep: every level gets its
// verdicts, each series its highest passing level (0 when none passes),
// and the lines name every failed level and why.
func TestJudge(t *testing.T) {
	objs, err := capacity.ParseAll([]string{"p99<=50ms"})
	if err != nil {
		t.Fatal(err)
	}
	level := func(c int, p99 float64) stats.Summary {
		return stats.Summary{Concurrency: c, Complete: 10, Spectrum: map[string]float64{"99": p99}}
	}
	series := []SeriesResult{
		{Label: "a", Levels: []stats.Summary{level(1, 10), level(2, 40), level(4, 60)}},
		{Label: "b", Levels: []stats.Summary{level(1, 80)}},
	}
	j := Judge(series, objs)
	if len(j.Highest) != 2 || j.Highest[0] != 2 || j.Highest[1] != 0 {
		t.Errorf("Highest = %v, want [2 0]", j.Highest)
	}
	if strings.Join(j.Failed, "; ") != "a at c=4; b at c=1" {
		t.Errorf("Failed = %q", j.Failed)
	}
	if !capacity.Passed(series[0].Levels[0].SLO) || capacity.Passed(series[0].Levels[2].SLO) {
		t.Errorf("the levels' verdicts: %+v", series[0].Levels)
	}
	text := strings.Join(j.Lines, "\n")
	for _, want := range []string{"a: highest level that passes: c=2; c=1 pass, c=2 pass, c=4 FAIL (", "b: highest level that passes: none"} {
		if !strings.Contains(text, want) {
			t.Errorf("lines %q lack %q", text, want)
		}
	}
	if j := Judge(series, nil); j.Lines != nil || j.Highest != nil {
		t.Errorf("without objectives: %+v", j)
	}
}

// TestShortTrials checks the note of a sweep's short trials: counted,
// the shortest named, each series once; none without a short trial.
func TestShortTrials(t *testing.T) {
	var st ShortTrials
	if n := st.Note(); n != "" {
		t.Errorf("no trials: %q", n)
	}
	for _, s := range []struct {
		label string
		secs  float64
	}{{"a", 0.5}, {"a", 0.25}, {"b", 2}} {
		sum := stats.Summary{TimeTaken: s.secs}
		sum.Client.CPUPercent, sum.Client.CPUUserSeconds = 50, s.secs/2
		st.Add(s.label, &sum)
	}
	n := st.Note()
	if !strings.HasPrefix(n, "2 of 3 trials (of a) lasted less than 1 s") {
		t.Errorf("note %q", n)
	}
	if !strings.Contains(n, "the shortest 0.25 s") {
		t.Errorf("note %q lacks the shortest", n)
	}
}
