package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/trials"
)

// fixtureRecord is the run record of testdata/schema1/bench.json.
func fixtureRecord(t *testing.T) *stats.Record {
	t.Helper()
	r, _ := schema1(t, "bench.json")
	return r.(*Run).Record
}

// TestWriteReadEveryKind: a result of every type, written and read
// back, is read as the same type, with its kind first in the file and
// the same bytes when written again.
func TestWriteReadEveryKind(t *testing.T) {
	rec := fixtureRecord(t)
	sum := stats.SummaryOf(rec)
	trialSum := stats.SummaryOf(rec)
	trialSum.Repeated = &stats.Repeated{Trials: []*stats.Record{rec}, RequestsPerSecondCI95: []float64{1, 2}}
	sw := &Sweep{Levels: []int{1}, RequestsPerLevel: rec.Plan.Requests,
		Series: []SweepSeries{{Label: "a", Levels: []stats.Summary{stats.SummaryOf(rec)}, Records: []*stats.Record{rec}}}}
	probe, err := NewProbe(ProbeTarget{URL: "http://x/", Protocol: "http", Network: "tcp", Address: "x:80"}, 5,
		struct {
			B struct {
				Verdict  string `json:"verdict"`
				Evidence string `json:"evidence"`
				N        int    `json:"n"`
			} `json:"b_check"`
			A struct {
				Verdict string `json:"verdict"`
			} `json:"a_check"`
			Crashed string `json:"crashed_on"`
		}{Crashed: "a_check"}, []string{"fine"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		r       Result
		kind    Kind
		records int
	}{
		{&Run{Summary: &sum, Record: rec}, KindBench, 1},
		{&Trials{Summary: &trialSum, Record: rec}, KindBench, 1},
		{sw, KindSweep, 1},
		{&MergedRun{Summary: &sum, Record: rec, Generators: []Generator{{File: "a.json"}}, Info: &MergeInfo{Overlap: 1}}, KindMerge, 1},
		{&MergedSweep{Sweep: sw, Generators: []Generator{{File: "a.json"}}, Info: &MergeInfo{}}, KindMerge, 1},
		{&Capacity{JSONReport: &capacity.JSONReport{Model: "open", SLO: []string{"p99<=1s"}, Steps: []capacity.StepJSON{{Rate: 10, Records: []*stats.Record{rec}}}}}, KindCapacity, 1},
		{&Comparison{Files: []string{"a", "b"}, Notes: []string{"n"}, Comparisons: []trials.Comparison{{Series: "b", Baseline: "a", Metric: "requests_per_second"}}}, KindCompare, 0},
		{probe, KindProbe, 0},
		{&ProbeRange{URL: "http://x:{1..2}/", Addresses: []ProbeAddress{{Probe: probe}, {Target: ProbeTarget{URL: "http://x:2/"}, Error: "refused"}}}, KindProbe, 0},
		{&Study{Result: &study.Result{Declaration: study.Declaration{Question: "which?"}}}, KindStudy, 0},
		{&Record{Record: rec}, KindRecord, 1},
	} {
		t.Run(fmt.Sprintf("%T", tc.r), func(t *testing.T) {
			var once bytes.Buffer
			if err := Write(&once, tc.r); err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("{\n  \"kind\": %q,\n", tc.kind); !strings.HasPrefix(once.String(), want) {
				t.Errorf("starts %.40q, want %q", once.String(), want)
			}
			got, err := Read("x.json", once.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%T", got) != fmt.Sprintf("%T", tc.r) || got.ResultKind() != tc.kind || len(got.Saved().Records) != tc.records {
				t.Errorf("read as %T of kind %s with %d records", got, got.ResultKind(), len(got.Saved().Records))
			}
			var twice bytes.Buffer
			if err := Write(&twice, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(once.Bytes(), twice.Bytes()) {
				t.Errorf("write, read, write:\n%s", firstDiff(once.String(), twice.String()))
			}
		})
	}
}

// TestProbeChecks: a probe keeps its report's keys in the protocol's
// order, reads the checks among them (an object with a verdict) with
// their other keys sorted, and an address of a range has no kind.
func TestProbeChecks(t *testing.T) {
	r, _ := schema1(t, "probe.json")
	p := r.(*Probe)
	var keys []string
	for _, f := range p.Checks {
		keys = append(keys, f.Key)
		if f.Check == nil || f.Check.Verdict == "" {
			t.Errorf("%s: no check read: %+v", f.Key, f.Check)
		}
		for i := 1; i < len(f.Check.Numbers); i++ {
			if f.Check.Numbers[i-1].Key >= f.Check.Numbers[i].Key {
				t.Errorf("%s: numbers not sorted: %v", f.Key, f.Check.Numbers)
			}
		}
	}
	if len(keys) == 0 || keys[0] != "http11_persistent" {
		t.Errorf("checks %v", keys)
	}
	pr := &ProbeRange{Addresses: []ProbeAddress{{Probe: p}}}
	var b bytes.Buffer
	if err := Write(&b, pr); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), `"kind"`); n != 1 {
		t.Errorf("a range with one address has %d kinds", n)
	}
}

// TestStream: the values of one input are given one after the other,
// each read by Read; bytes that are no JSON stop it with ErrNotJSON.
func TestStream(t *testing.T) {
	_, bench := schema1(t, "bench.json")
	_, sweep := schema1(t, "sweep.json")
	st := NewStream(bytes.NewReader(append(append(bytes.Clone(bench), sweep...), "{oops"...)))
	var kinds []string
	for {
		raw, err := st.Next()
		if err == io.EOF {
			t.Fatal("no error for the last value")
		}
		if err != nil {
			if !errors.Is(err, ErrNotJSON) {
				t.Errorf("error %v, want ErrNotJSON", err)
			}
			break
		}
		r, err := Read("in.json", raw)
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, fmt.Sprintf("%T", r))
	}
	if got := strings.Join(kinds, " "); got != "*document.Run *document.Sweep" {
		t.Errorf("read %s", got)
	}
}

// TestTrialsFiguresApart: a result of trials whose pooled requests/sec
// and median differ is saved with the median as requests_per_second and
// the pooled figure as pooled_requests_per_second (schema 1), neither in
// the other's place; the pooled run given to NewTrials is not changed,
// and Read gives the pooled run back with its own requests/sec.
func TestTrialsFiguresApart(t *testing.T) {
	rec := fixtureRecord(t)
	pooled := stats.Run{Record: rec, Summary: stats.SummaryOf(rec)}
	pooledRPS := pooled.Summary.RequestsPerSecond
	median := pooledRPS / 2
	if pooledRPS <= 0 {
		t.Fatalf("fixture's req/s %v", pooledRPS)
	}
	med := trials.Summary{Trials: 3,
		RequestsPerSecond: trials.Estimate{Median: median, Lo: median * 0.9, Hi: median * 1.1, N: 3, Confidence: 0.75},
		P50Ms:             trials.Estimate{Median: 7, Lo: 6, Hi: 8, N: 3, Confidence: 0.75},
		P99Ms:             trials.Estimate{Median: 70, Lo: 60, Hi: 80, N: 3, Confidence: 0.75}}
	runs := []*stats.Run{&pooled, &pooled, &pooled}
	tr := NewTrials(runs, pooled, med, nil, 42)
	if pooled.Summary.RequestsPerSecond != pooledRPS || pooled.Summary.Repeated != nil {
		t.Fatal("NewTrials changed the pooled run's summary")
	}
	if tr.Pooled.Summary.RequestsPerSecond != pooledRPS {
		t.Errorf("Pooled req/s %v, want the pooled %v", tr.Pooled.Summary.RequestsPerSecond, pooledRPS)
	}
	var b bytes.Buffer
	if err := Write(&b, tr); err != nil {
		t.Fatal(err)
	}
	var keys struct {
		RPS    float64   `json:"requests_per_second"`
		Pooled float64   `json:"pooled_requests_per_second"`
		CI     []float64 `json:"requests_per_second_ci95"`
		P99    float64   `json:"p99_ms"`
		Seed   uint64    `json:"seed"`
		Trials []any     `json:"trials"`
	}
	if err := json.Unmarshal(b.Bytes(), &keys); err != nil {
		t.Fatal(err)
	}
	if keys.RPS != median || keys.Pooled != pooledRPS || len(keys.CI) != 2 || keys.P99 != 70 || keys.Seed != 42 || len(keys.Trials) != 3 {
		t.Errorf("saved requests_per_second %v (want the median %v), pooled_requests_per_second %v (want %v), ci %v, p99_ms %v, seed %d, %d trials",
			keys.RPS, median, keys.Pooled, pooledRPS, keys.CI, keys.P99, keys.Seed, len(keys.Trials))
	}
	got, err := Read("trials.json", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	rt, ok := got.(*Trials)
	if !ok {
		t.Fatalf("read as %T", got)
	}
	if rt.RequestsPerSecond != median || rt.Pooled.Summary.RequestsPerSecond != pooledRPS || rt.Pooled.Summary.Repeated != nil {
		t.Errorf("read: saved req/s %v (want %v), pooled %v (want %v)", rt.RequestsPerSecond, median, rt.Pooled.Summary.RequestsPerSecond, pooledRPS)
	}
}

// TestTrialsMediansRead: a result of trials written and read back has the
// medians it was made with (Trials.Medians, from the trials' records),
// with one trial (no interval) and with several.
func TestTrialsMediansRead(t *testing.T) {
	rec := fixtureRecord(t)
	for _, n := range []int{1, 3, 6} {
		runs := make([]*stats.Run, n)
		recs := make([]*stats.Record, n)
		ts := make([]trials.Trial, n)
		for i := range runs {
			r := *rec
			r.Elapsed = rec.Elapsed * time.Duration(i+1) // trials apart
			runs[i] = &stats.Run{Record: &r, Summary: stats.SummaryOf(&r)}
			recs[i], ts[i] = &r, stats.TrialOf(&runs[i].Summary)
		}
		m, err := stats.MergeAs(stats.InTurn, recs...)
		if err != nil {
			t.Fatal(err)
		}
		written := NewTrials(runs, stats.Run{Record: m, Summary: stats.SummaryOf(m)}, trials.Summarize(ts), nil, 7)
		var b bytes.Buffer
		if err := Write(&b, written); err != nil {
			t.Fatal(err)
		}
		got, err := Read("trials.json", b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		read, ok := got.(*Trials)
		if !ok {
			t.Fatalf("%d trials: read as %T", n, got)
		}
		// %v, so that the intervals of one trial (NaN) compare equal.
		if w, g := fmt.Sprintf("%+v", written.Medians), fmt.Sprintf("%+v", read.Medians); g != w {
			t.Errorf("%d trials: read medians\n%s\nwant the written\n%s", n, g, w)
		}
		if read.Medians.Trials != n {
			t.Errorf("%d trials: read medians of %d", n, read.Medians.Trials)
		}
	}
}

// TestTrialsUntil: a result of trials run until decided against a saved
// run keeps until, max_repeat, budget_seconds and stopping (a sweep's
// keys), read back as written; a result of a fixed count has none.
func TestTrialsUntil(t *testing.T) {
	rec := fixtureRecord(t)
	pooled := stats.Run{Record: rec, Summary: stats.SummaryOf(rec)}
	runs := []*stats.Run{&pooled, &pooled, &pooled, &pooled}
	u := &trials.Stopping{Stopped: trials.StoppedDecided, Pairs: 1, Decided: 1, Rounds: 4, Seconds: 2.5, Confidence: 0.99}
	for _, until := range []string{"", trials.UntilDecided} {
		tr := NewTrials(runs, pooled, trials.Summary{}, nil, 3)
		tr.SetUntil(trials.Plan{Until: until, MaxRepeat: 12, Budget: time.Minute}, u)
		var b bytes.Buffer
		if err := Write(&b, tr); err != nil {
			t.Fatal(err)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(b.Bytes(), &keys); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"until", "max_repeat", "budget_seconds", "stopping"} {
			if _, ok := keys[k]; ok != (until != "") {
				t.Errorf("until %q: key %q present %v", until, k, ok)
			}
		}
		got, err := Read("trials.json", b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		r := got.(*Trials).Repeated
		if until != "" && (r.Until != until || r.MaxRepeat != 12 || r.BudgetSeconds != 60 || r.Stopping == nil || *r.Stopping != *u) {
			t.Errorf("read back: until %q, max_repeat %d, budget %v, stopping %+v", r.Until, r.MaxRepeat, r.BudgetSeconds, r.Stopping)
		}
	}
}
