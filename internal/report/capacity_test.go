package report

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/backbench/backbench/internal/capacity"
)

// capacityFake is a backend of known truth for capacity.Search: a level
// passes p99<=50ms up to truth (p99 38.2 ms) and fails above it (p99
// 71.5 ms); from limitAt on (when > 0) the client holds the step back,
// achieving 90% of limitAt. Each step advances a fake clock by its
// length; tweak, when set, changes a step's measure (runs counts the
// steps at that level so far, this one included).
type capacityFake struct {
	truth, limitAt float64
	tweak          func(level float64, length time.Duration, runs int, m *capacity.Measure)
	now            time.Time
	runs           map[float64]int
}

func (f *capacityFake) step(_ context.Context, level float64, length time.Duration) (capacity.Measure, error) {
	if f.runs == nil {
		f.runs = map[float64]int{}
	}
	f.runs[level]++
	f.now = f.now.Add(length)
	m := capacity.Measure{AchievedRPS: level, P50: 10, P99: 38.2}
	if level > f.truth {
		m.P99 = 71.5
	}
	if f.limitAt > 0 && level >= f.limitAt {
		m.ClientLimit = "the client's CPU was at 195% of 2 cores"
		m.AchievedRPS = f.limitAt * 0.9
	}
	if f.tweak != nil {
		f.tweak(level, length, f.runs[level], &m)
	}
	return m, nil
}

// capacityObjectives is the one objective the fake's searches are made
// within: p99<=50ms.
func capacityObjectives(t *testing.T) []capacity.Objective {
	t.Helper()
	objs, err := capacity.ParseAll([]string{"p99<=50ms"})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// searchedCapacity runs capacity.Search on f within p99<=50ms, from 10
// in 1-minute steps unless cfg says otherwise, and returns the search as
// the renderers see it.
func searchedCapacity(t *testing.T, model string, f *capacityFake, cfg capacity.Config) *Capacity {
	t.Helper()
	cfg.Objectives = capacityObjectives(t)
	cfg.Now = func() time.Time { return f.now }
	if cfg.Step == 0 {
		cfg.Step = time.Minute
	}
	if cfg.Start == 0 {
		cfg.Start = 10
	}
	res, err := capacity.Search(context.Background(), cfg, f.step)
	if err != nil {
		t.Fatal(err)
	}
	return &Capacity{Model: model, Objectives: cfg.Objectives, Result: res, MaxTime: cfg.MaxTime}
}

// TestCapacityAnswer: the answer's sentence of searches that end each
// way: a rate or a concurrency confirmed, nothing passing, the time
// bound, the client, --max, a confirmation that refuted a level,
// confirmations that all failed, and a level confirmed below them.
func TestCapacityAnswer(t *testing.T) {
	const (
		open, closed = capacity.ModelOpen, capacity.ModelClosed
		confirm      = 5 * time.Minute
	)
	for _, c := range []struct {
		name                  string
		model                 string
		fake                  capacityFake
		cfg                   capacity.Config
		exact, prefix, suffix string
		contains              []string
	}{
		{name: "open", model: open, fake: capacityFake{truth: 4210}, cfg: capacity.Config{Confirm: confirm},
			prefix: "sustains 4,", contains: []string{"with p99 <= 50 ms (p99 at that rate: 38.2 ms; first failing rate 4,"},
			suffix: ": p99 71.5 ms); 60 s steps, confirmed by a 300 s run"},
		{name: "closed", model: closed, fake: capacityFake{truth: 20}, cfg: capacity.Config{Start: 1, Integer: true, Confirm: confirm},
			exact: "sustains a concurrency of 20 with p99 <= 50 ms (p99 at that concurrency: 38.2 ms; first failing concurrency 21: p99 71.5 ms); 60 s steps, confirmed by a 300 s run"},
		{name: "nothing passes", model: open, fake: capacityFake{truth: 0}, cfg: capacity.Config{Start: 200, Confirm: confirm},
			exact: "sustains no rate tried with p99 <= 50 ms (lowest rate tried 12.5 req/s: p99 71.5 ms); 60 s steps"},
		{name: "max time", model: open, fake: capacityFake{truth: 1e9}, cfg: capacity.Config{MaxTime: 3*time.Minute + time.Second, Confirm: confirm},
			prefix: "sustains at least 40 req/s", contains: []string{"stopped early at --max-time 3m1s"}},
		{name: "client", model: open, fake: capacityFake{truth: 1e9, limitAt: 1000}, cfg: capacity.Config{Confirm: confirm},
			prefix: "sustains at least 900 req/s", contains: []string{"limited by the client, not the backend: the client's CPU", "confirmed by a 300 s run"}},
		{name: "max", model: open, fake: capacityFake{truth: 1e9}, cfg: capacity.Config{Max: 100, Confirm: confirm},
			prefix: "sustains at least 100 req/s", contains: []string{"; 100 was the highest rate allowed (--max)"}},
		{name: "refuted", model: closed, cfg: capacity.Config{Start: 80, Max: 80, Integer: true, Confirm: confirm},
			// 80's confirmation fails (a queue its short step did not
			// see); 76's fails by noise once and passes its second look.
			fake: capacityFake{truth: 100, tweak: func(level float64, length time.Duration, runs int, m *capacity.Measure) {
				if level == 80 && length > time.Minute || level == 76 && runs == 1 {
					m.P99 = 60
				}
			}},
			prefix: "sustains a concurrency of 76 ", suffix: "; 60 s steps, confirmed by a 300 s run"},
		{name: "unconfirmed", model: open, cfg: capacity.Config{Start: 200, Max: 200, Confirm: confirm},
			fake: capacityFake{truth: 200, tweak: func(level float64, length time.Duration, _ int, m *capacity.Measure) {
				if length > time.Minute && level > 170 {
					m.P99 = 70
				}
			}},
			exact: "sustains no rate confirmed with p99 <= 50 ms; 60 s steps; no 300 s confirmation run passed (200, 190, 180, 171 req/s)"},
		{name: "confirmed below the walk", model: open, cfg: capacity.Config{Start: 100, Max: 200, Resolution: 0.001, Confirm: confirm},
			fake: capacityFake{truth: 200, tweak: func(level float64, length time.Duration, _ int, m *capacity.Measure) {
				if length > time.Minute && level > 120 {
					m.P99 = 70
				}
			}},
			exact: "sustains 117 req/s with p99 <= 50 ms (p99 at that rate: 38.2 ms; first failing rate 121 req/s: p99 70.0 ms); 60 s steps, confirmed by a 300 s run; " +
				"the confirmations from 200 down to 171 failed, and bisecting below them with confirmation runs ended at 117, 3% below the lowest failing rate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ans := searchedCapacity(t, c.model, &c.fake, c.cfg).Answer()
			if c.exact != "" && ans != c.exact {
				t.Errorf("answer\n%q\nwant\n%q", ans, c.exact)
			}
			if !strings.HasPrefix(ans, c.prefix) || !strings.HasSuffix(ans, c.suffix) {
				t.Errorf("answer %q, want it to start %q and end %q", ans, c.prefix, c.suffix)
			}
			for _, s := range c.contains {
				if !strings.Contains(ans, s) {
					t.Errorf("answer %q lacks %q", ans, s)
				}
			}
		})
	}
}

// TestCapacityTableAndJSON: the table has a row per step under its
// header, a failing step's verdict names its failing objective; the
// JSON of a closed-model search has its answer as a concurrency and each
// step's level as its concurrency.
func TestCapacityTableAndJSON(t *testing.T) {
	r := searchedCapacity(t, capacity.ModelClosed, &capacityFake{truth: 20}, capacity.Config{Start: 8, Integer: true})
	var b strings.Builder
	if err := r.Table(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != len(r.Result.Steps)+1 || !strings.Contains(lines[0], "concurrency") ||
		!strings.Contains(lines[3], "FAIL p99 71.5 ms") {
		t.Errorf("table:\n%s", b.String())
	}
	j := r.JSON(0)
	if j.CapacityConcurrency == nil || *j.CapacityConcurrency != 20 || j.CapacityRPS != nil || j.Steps[1].Concurrency != 16 || j.Steps[2].Pass ||
		j.Answer != r.Answer() {
		t.Errorf("json %+v", j)
	}
}

// TestCapacityTableLonger: a step that could not tell whether its load
// held, run longer and still unsure, fails in the table as not shown
// steady, and says it was run longer.
func TestCapacityTableLonger(t *testing.T) {
	// 640 fails when run longest, and the search bisects below it: 480
	// is unsure at every length.
	f := &capacityFake{truth: 1000, tweak: func(level float64, length time.Duration, _ int, m *capacity.Measure) {
		switch {
		case level == 640 && length < 4*time.Minute:
			m.Held = capacity.Steadiness{Verdict: capacity.HeldUnsure, Why: "mean latency grew from 10 ms to 14 ms through the step", Judged: true}
		case level == 640:
			m.Held = capacity.Steadiness{Verdict: capacity.HeldNo, Why: "mean latency grew from 10 ms to 30 ms through the step", Judged: true}
		case level >= 480 && level < 640:
			m.Held = capacity.Steadiness{Verdict: capacity.HeldUnsure, Why: "requests in flight grew from 3.0 to 5.5 through the step", Judged: true}
		}
	}}
	r := searchedCapacity(t, capacity.ModelOpen, f, capacity.Config{})
	var b strings.Builder
	if err := r.Table(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "FAIL not shown steady: requests in flight grew from 3.0 to 5.5 through the step (longer: the shorter step could not tell)") {
		t.Errorf("table:\n%s", b.String())
	}
}

// TestCapacityTableFit: a capacity table whose verdicts make rows wider
// than 100 columns puts those verdicts under their rows, wrapped, and no
// line is wider; a table that fits is printed as Table prints it.
func TestCapacityTableFit(t *testing.T) {
	r := searchedCapacity(t, capacity.ModelClosed, &capacityFake{truth: 20}, capacity.Config{Start: 8, Integer: true})
	var table, fit strings.Builder
	if err := r.Table(&table); err != nil {
		t.Fatal(err)
	}
	if err := r.TableFit(&fit, 100); err != nil {
		t.Fatal(err)
	}
	if table.String() != fit.String() {
		t.Errorf("a table that fits was changed:\n%s\n---\n%s", table.String(), fit.String())
	}
	for i := range r.Result.Steps {
		st := &r.Result.Steps[i]
		if !st.Pass {
			st.Again, st.Longer, st.ClientLimit = true, true, "the client's CPU was saturated"
		}
	}
	table.Reset()
	fit.Reset()
	r.Table(&table)
	if err := r.TableFit(&fit, 100); err != nil {
		t.Fatal(err)
	}
	if Width(table.String()) <= 100 {
		t.Fatalf("the test needs a table wider than 100 columns:\n%s", table.String())
	}
	if n := Width(fit.String()); n > 100 {
		t.Errorf("fitted table of %d columns:\n%s", n, fit.String())
	}
	if got, want := strings.Count(fit.String(), "FAIL"), strings.Count(table.String(), "FAIL"); got != want {
		t.Errorf("%d FAIL verdicts fitted, %d in the table", got, want)
	}
	if !strings.Contains(fit.String(), "\n    FAIL ") {
		t.Errorf("no verdict under its row:\n%s", fit.String())
	}
	for _, l := range strings.Split(fit.String(), "\n") {
		if strings.HasPrefix(l, "    ") && utf8.RuneCountInString(l) > 100 {
			t.Errorf("a verdict line of %d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
}

// TestCapacityProgressLines: the line that starts a search, each step's
// line and the title of the steps' table, in both models.
func TestCapacityProgressLines(t *testing.T) {
	open := Capacity{Model: capacity.ModelOpen, MaxTime: 5 * time.Minute, Result: capacity.Result{Steps: make([]capacity.Step, 3)}}
	if got, want := open.Searching("http://x/", 2*time.Second, 30*time.Second),
		"Searching the capacity of http://x/ (open model, 2 s per step, a 30 s confirmation; at most 5m0s)"; got != want {
		t.Errorf("Searching:\n%s\nwant\n%s", got, want)
	}
	st := capacity.Step{Level: 1200, Length: 2 * time.Second, Pass: false, Measure: capacity.Measure{P99: 61.5, ErrorRate: 0.001,
		Held: capacity.Steadiness{Verdict: capacity.HeldNo, Why: "latency grew"}}}
	if got, want := open.StepLine(st), "  1,200 req/s, 2 s: FAIL (latency grew), p99 "+capacity.FormatMs(61.5)+", errors 0.10%"; got != want {
		t.Errorf("StepLine:\n%q\nwant\n%q", got, want)
	}
	if got, want := open.Heading("http://x/", 256, 2*time.Second, time.Second, 0, 1500*time.Millisecond),
		"Capacity search: http://x/, open model, at most 256 in flight, 2 s per step after a 1 s warm-up, no confirmation run, 3 steps in 1.5 s"; got != want {
		t.Errorf("Heading:\n%s\nwant\n%s", got, want)
	}
	closed := Capacity{Model: capacity.ModelClosed}
	st = capacity.Step{Level: 8, Length: 10 * time.Second, Pass: true, Confirm: true, Measure: capacity.Measure{P99: 3,
		Held: capacity.Steadiness{Verdict: capacity.HeldYes}}}
	if got, want := closed.StepLine(st), "  8 connections, 10 s confirmation: pass, p99 "+capacity.FormatMs(3)+", errors 0.00%"; got != want {
		t.Errorf("closed StepLine:\n%q\nwant\n%q", got, want)
	}
	if got, want := closed.Heading("http://x/", 256, time.Second, 0, 30*time.Second, time.Second),
		"Capacity search: http://x/, closed model, 1 s per step, a 30 s confirmation run, 0 steps in 1.0 s"; got != want {
		t.Errorf("closed Heading:\n%s\nwant\n%s", got, want)
	}
	for _, c := range []struct {
		model string
		v     float64
		want  string
	}{{capacity.ModelOpen, 187.5, "187.5"}, {capacity.ModelOpen, 4210, "4,210"}, {capacity.ModelClosed, 20.9, "20"}, {capacity.ModelClosed, 4210, "4,210"}} {
		r := Capacity{Model: c.model}
		if got := r.FormatLevel(c.v); got != c.want {
			t.Errorf("%s FormatLevel(%g) = %q, want %q", c.model, c.v, got, c.want)
		}
	}
}

// TestCapacityChartWords: the chart's line is the p99 objective's bound,
// its axis the model's level.
func TestCapacityChartWords(t *testing.T) {
	objs, err := capacity.ParseAll([]string{"errors<=1%", "p99<=50ms"})
	if err != nil {
		t.Fatal(err)
	}
	r := Capacity{Model: capacity.ModelOpen, Objectives: objs}
	if r.P99Bound() != 50 || r.LevelAxis() != "offered rate (req/s)" {
		t.Errorf("open: %v, %q", r.P99Bound(), r.LevelAxis())
	}
	r = Capacity{Model: capacity.ModelClosed, Objectives: objs[:1]}
	if r.P99Bound() != 0 || r.LevelAxis() != "concurrency (connections)" {
		t.Errorf("closed: %v, %q", r.P99Bound(), r.LevelAxis())
	}
}
