package capacity

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/stats"
)

func TestParse(t *testing.T) {
	good := []struct {
		in     string
		metric string
		bound  float64
	}{
		{"p99<=50ms", MetricP99, 50},
		{" p99.9 <= 1.5s ", MetricP999, 1500},
		{"P50<=500us", MetricP50, 0.5},
		{"p90<=2ms", MetricP90, 2},
		{"max<=1s", MetricMax, 1000},
		{"errors<=1%", MetricErrors, 1},
		{"errors<=0.5 %", MetricErrors, 0.5},
		{"errors<=0%", MetricErrors, 0},
	}
	for _, c := range good {
		o, err := Parse(c.in)
		if err != nil || o.Metric != c.metric || o.Bound != c.bound {
			t.Errorf("Parse(%q) = %+v, %v; want %s <= %g", c.in, o, err, c.metric, c.bound)
		}
	}
	for _, in := range []string{"", "p99", "p99<50ms", "p99<=50", "p99<=-5ms", "p99<=0s", "p95<=5ms",
		"errors<=1", "errors<=101%", "errors<=-1%", "latency<=5ms", "p99>=5ms"} {
		if o, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", in, o)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): error on several lines: %q", in, err)
		}
	}
	if _, err := ParseAll(nil); err == nil {
		t.Error("ParseAll(nil): want an error")
	}
}

func TestEvaluateAndVerdicts(t *testing.T) {
	objs, err := ParseAll([]string{"p99<=1ms", "p99<=50ms", "errors<=1%"})
	if err != nil {
		t.Fatal(err)
	}
	m := Measure{P99: 10.25, ErrorRate: 0.002}
	rs := Evaluate(objs, &m)
	if rs[0].Pass || !rs[1].Pass || !rs[2].Pass || Passed(rs) || rs[2].Value != 0.2 {
		t.Fatalf("results %+v", rs)
	}
	v := Verdicts(objs, rs)
	want := []string{"p99<=1ms: FAIL, p99 10.2 ms (9.2 ms over)", "p99<=50ms: pass, p99 10.2 ms", "errors<=1%: pass, errors 0.20%"}
	for i := range want {
		if v[i] != want[i] {
			t.Errorf("verdict %d = %q, want %q", i, v[i], want[i])
		}
	}
	lines, failed := Judged(objs, rs)
	if len(lines) != 3 || len(failed) != 1 || failed[0] != want[0] {
		t.Errorf("Judged: lines %q, failed %q: want the first failed", lines, failed)
	}
	if _, failed := Judged(objs[1:], rs[1:]); failed != nil {
		t.Errorf("Judged of objectives met: failed %q, want nil", failed)
	}
}

// fakeBackend is a step function of known truth: a level passes p99<=50ms
// if it is at most capacity (p99 38.2 ms), and fails above it (p99 71.5
// ms). Each step advances a fake clock by a minute.
type fakeBackend struct {
	capacity float64
	now      time.Time
	levels   []float64
	limitAt  float64 // from this level, the client is the limit
}

func (f *fakeBackend) step(_ context.Context, level float64, length time.Duration) (Measure, error) {
	f.levels = append(f.levels, level)
	f.now = f.now.Add(length)
	m := Measure{AchievedRPS: level, P50: 10, P99: 38.2}
	if level > f.capacity {
		m.P99 = 71.5
	}
	if f.limitAt > 0 && level >= f.limitAt {
		m.ClientLimit = "the client's CPU was at 195% of 2 cores"
		m.AchievedRPS = f.limitAt * 0.9
	}
	return m, nil
}

func search(t *testing.T, f *fakeBackend, cfg Config) Result {
	t.Helper()
	objs, _ := ParseAll([]string{"p99<=50ms"})
	cfg.Objectives = objs
	cfg.Now = func() time.Time { return f.now }
	if cfg.Step == 0 {
		cfg.Step = time.Minute
	}
	if cfg.Start == 0 {
		cfg.Start = 10
	}
	res, err := Search(context.Background(), cfg, f.step)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSearchOpen(t *testing.T) {
	f := &fakeBackend{capacity: 4210}
	res := search(t, f, Config{Confirm: 5 * time.Minute})
	if res.Capacity > 4210 || res.Capacity < 4210*0.95 {
		t.Fatalf("capacity %g, want within 5%% below 4210 (levels %v)", res.Capacity, f.levels)
	}
	if ff := res.Steps[res.FirstFail].Level; ff <= 4210 || ff > res.Capacity*1.05 {
		t.Errorf("first failing level %g, want just above 4210", ff)
	}
	last := res.Steps[len(res.Steps)-1]
	if !last.Confirm || last.Level != res.Capacity || !last.Pass {
		t.Errorf("last step %+v, want a passing confirmation of %g", last, res.Capacity)
	}
	// Doubling from 10: 10 20 ... 5120 (fails), then bisection.
	for i, want := range []float64{10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 3840} {
		if f.levels[i] != want {
			t.Fatalf("levels %v, want doubling then bisection", f.levels)
		}
	}
	if res.LimitedBy != LimitedByBackend || res.StoppedEarly || !res.Confirmed || res.Best != len(res.Steps)-1 {
		t.Errorf("result %+v", res)
	}
}

func search0Objs() []Objective { o, _ := ParseAll([]string{"p99<=50ms"}); return o }

func TestSearchClosedExact(t *testing.T) {
	f := &fakeBackend{capacity: 20}
	res := search(t, f, Config{Start: 1, Integer: true, Confirm: 5 * time.Minute})
	if res.Capacity != 20 || res.Steps[res.FirstFail].Level != 21 {
		t.Fatalf("capacity %g first fail %+v (levels %v), want 20 and 21", res.Capacity, res.Steps[res.FirstFail], f.levels)
	}
	if n := len(f.levels); f.levels[n-1] != 20 || !res.Steps[n-1].Confirm || res.Steps[n-1].Length != 5*time.Minute ||
		!res.Confirmed || res.Best != n-1 {
		t.Errorf("levels %v: want a 5 minute confirmation of 20, and the answer resting on it", f.levels)
	}
	for _, l := range f.levels {
		if l != float64(int(l)) {
			t.Fatalf("levels %v: want whole numbers", f.levels)
		}
	}
}

func TestSearchStartFails(t *testing.T) {
	f := &fakeBackend{capacity: 3}
	res := search(t, f, Config{})
	if res.Capacity > 3 || res.Capacity < 2.85 {
		t.Fatalf("capacity %g, want about 3 (levels %v)", res.Capacity, f.levels)
	}
	if f.levels[1] != 10 || !res.Steps[1].Again || f.levels[2] != 5 || f.levels[3] != 2.5 {
		t.Errorf("levels %v, want the first level measured again, then halving from 10", f.levels)
	}
}

func TestSearchNothingPasses(t *testing.T) {
	f := &fakeBackend{capacity: 0}
	res := search(t, f, Config{Start: 200, Confirm: 5 * time.Minute})
	if res.Capacity != 0 || res.Best != -1 || len(res.Steps) != 6 {
		t.Fatalf("result %+v, levels %v: want 200 200 100 50 25 12.5, all failing", res, f.levels)
	}
	if ff := res.FirstFail; ff < 0 || res.Steps[ff].Level != 12.5 {
		t.Errorf("first failing step %d, want the lowest, 12.5", ff)
	}
}

func TestSearchConfirmFails(t *testing.T) {
	// 40 passes in the search but fails its confirmation: the answer is
	// below it.
	f := &fakeBackend{capacity: 40}
	res := search(t, f, Config{Start: 10, Integer: true, Confirm: 5 * time.Minute, Resolution: 0.3})
	if res.Capacity != 40 {
		t.Fatalf("capacity %g, want 40 (levels %v)", res.Capacity, f.levels)
	}
	// Now make the confirmation of 40 fail once.
	f = &fakeBackend{capacity: 40}
	runs := 0
	step := func(ctx context.Context, level float64, length time.Duration) (Measure, error) {
		m, err := f.step(ctx, level, length)
		if level == 40 {
			if runs++; runs == 2 {
				m.P99 = 60
			}
		}
		return m, err
	}
	objs := search0Objs()
	res, err := Search(context.Background(), Config{Objectives: objs, Start: 10, Integer: true, Confirm: 5 * time.Minute,
		Resolution: 0.3, Step: time.Minute}, step)
	if err != nil {
		t.Fatal(err)
	}
	// The failed confirmation of 40 steps down by the resolution: 28.
	if res.Capacity != 28 || res.Steps[res.FirstFail].Level != 40 || !res.Steps[res.FirstFail].Confirm {
		t.Fatalf("capacity %g, want 28, stepped down from the refuted 40 (levels %v)", res.Capacity, f.levels)
	}
	if last := res.Steps[len(res.Steps)-1]; !last.Confirm || !last.Pass || last.Level != res.Capacity {
		t.Errorf("last step %+v: want the new answer confirmed", last)
	}
}

func TestSearchMaxTime(t *testing.T) {
	f := &fakeBackend{capacity: 1e9}
	res := search(t, f, Config{MaxTime: 3*time.Minute + time.Second, Confirm: 5 * time.Minute})
	if !res.StoppedEarly || len(res.Steps) != 3 || res.Capacity != 40 {
		t.Fatalf("result %+v, want 3 steps (10 20 40) and a stop", res)
	}
}

func TestSearchClientLimited(t *testing.T) {
	f := &fakeBackend{capacity: 1e9, limitAt: 1000}
	res := search(t, f, Config{Confirm: 5 * time.Minute})
	if res.LimitedBy != LimitedByClient || res.Capacity != 900 || f.levels[len(f.levels)-1] != 900 || !res.Confirmed {
		t.Fatalf("result %+v, levels %v: want at least 900 (what the client achieved at 1280), confirmed", res, f.levels)
	}
	if n := len(f.levels); n < 4 || f.levels[n-2] != 1280 || f.levels[n-3] != 1280 || f.levels[n-4] != 1280 {
		t.Errorf("levels %v: want the held-back step run three times, then the lower bound confirmed", f.levels)
	}
	if !strings.HasPrefix(res.Reason, "the client's CPU") {
		t.Errorf("reason %q, want the client's", res.Reason)
	}
}

func TestSearchAtMax(t *testing.T) {
	f := &fakeBackend{capacity: 1e9}
	res := search(t, f, Config{Max: 100, Confirm: 5 * time.Minute})
	if !res.AtMax || res.Capacity != 100 || f.levels[len(f.levels)-2] != 100 || !res.Steps[len(res.Steps)-1].Confirm {
		t.Fatalf("result %+v levels %v", res, f.levels)
	}
}

func TestSearchStepError(t *testing.T) {
	boom := errors.New("boom")
	_, err := Search(context.Background(), Config{Objectives: search0Objs(), Start: 1, Step: time.Second},
		func(context.Context, float64, time.Duration) (Measure, error) { return Measure{}, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}

func TestSearchInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	res, err := Search(ctx, Config{Objectives: search0Objs(), Start: 1, Step: time.Second}, func(ctx context.Context, l float64, _ time.Duration) (Measure, error) {
		if n++; n == 3 {
			cancel()
			return Measure{}, ctx.Err()
		}
		return Measure{P99: 1}, nil
	})
	if err != nil || !res.Interrupted || res.Capacity != 2 || len(res.Steps) != 2 {
		t.Fatalf("result %+v err %v", res, err)
	}
}

// TestSearchClientHiccup: a step the client held back once is run again
// and the search goes on; the hiccup leaves no mark on the answer.
func TestSearchClientHiccup(t *testing.T) {
	f := &fakeBackend{capacity: 20}
	runs := map[float64]int{}
	step := func(ctx context.Context, level float64, length time.Duration) (Measure, error) {
		m, err := f.step(ctx, level, length)
		// The first run of 8 (a search step) and the second of 20 (its
		// confirmation) are held back.
		if runs[level]++; runs[level] == 1 && level == 8 || runs[level] == 2 && level == 20 {
			m.ClientLimit, m.P99 = "the client sent requests up to 80 ms late", 90
		}
		return m, err
	}
	res, err := Search(context.Background(), Config{Objectives: search0Objs(), Start: 1, Integer: true, Confirm: 5 * time.Minute, Step: time.Minute}, step)
	if err != nil {
		t.Fatal(err)
	}
	if res.Capacity != 20 || res.LimitedBy != LimitedByBackend || runs[8] != 2 || runs[20] != 3 {
		t.Fatalf("result %+v, levels %v", res, f.levels)
	}
	last := res.Steps[len(res.Steps)-1]
	if !last.Confirm || !last.Pass || last.Level != 20 {
		t.Errorf("levels %v: want 20 confirmed after a retry", f.levels)
	}
}

func TestFromSummary(t *testing.T) {
	objs := search0Objs()
	base := func(p99 float64) stats.Summary {
		return stats.Summary{Complete: 1000, RequestsPerSecond: 200, TimeTaken: 5,
			Spectrum: map[string]float64{"50": 10, "90": 12, "99": p99, "99.9": p99 + 1, "100": p99 + 2},
			Client:   stats.ClientHealth{Cores: 2, CPUPercent: 20, SchedulerLateMaxMs: 3}}
	}
	open := func(s stats.Summary, asked, achieved float64, ceilingLate int64, uncorrectedP99 float64) stats.Summary {
		s.Open = &stats.OpenModel{RateAsked: asked, RateAchieved: achieved, CeilingLate: ceilingLate, SchedulerLateMaxMs: 4}
		s.UncorrectedPercentiles = map[string]float64{"50": 10, "90": 11, "99": uncorrectedP99, "100": uncorrectedP99}
		s.Concurrency = 8
		return s
	}
	cpu := base(20)
	cpu.Client.CPUPercent = 190
	late := base(60)
	late.Client.SchedulerLateMaxMs = 15
	veryLate := base(90)
	veryLate.Client.SchedulerLateMaxMs = 15
	// Half the asked rate finished, the rest was sent and still in flight
	// at the end (a queue in the backend): not the client's limit.
	backlog := open(base(20), 100, 50, 0, 20)
	backlog.Open.UnsentInFlight = 250
	failing := base(20)
	failing.Failed, failing.Non2xx = 10, 5
	none := stats.Summary{Failed: 10, TimeTaken: 2}
	for _, c := range []struct {
		name  string
		s     stats.Summary
		limit string // a part of the reason, "" for none
	}{
		{"backend", base(20), ""},
		{"client CPU", cpu, "the client's CPU was at 190% of 2 cores"},
		{"closed, client delay explains", late, "waited up to 15.0 ms for a CPU"},
		{"closed, too slow for client delay", veryLate, ""},
		{"open, rate not sent", open(base(20), 100, 50, 0, 20), "the client sent 50 req/s of the 100 asked"},
		{"open, in flight at the end", backlog, ""},
		{"open, ceiling", open(base(80), 200, 200, 50, 20), "the in-flight ceiling (-c 8) held back 50 of 1000"},
		{"open, client late", open(base(80), 200, 200, 0, 20), "requests up to 4.0 ms late"},
		{"open, backend slow", open(base(80), 200, 200, 50, 70), ""},
	} {
		m := FromSummary(&c.s, objs)
		if c.limit == "" && m.ClientLimit != "" || !strings.Contains(m.ClientLimit, c.limit) {
			t.Errorf("%s: limit %q, want %q", c.name, m.ClientLimit, c.limit)
		}
	}
	m := FromSummary(&failing, objs)
	if m.ErrorRate != 15.0/1010 || m.P99 != 20 || m.AchievedRPS != 200 {
		t.Errorf("measure %+v", m)
	}
	m = FromSummary(&none, objs)
	if m.ErrorRate != 1 || m.P99 != 2000 || m.Max != 2000 {
		t.Errorf("no response: measure %+v, want the run's length as latency", m)
	}
}

// TestSearchFirstStepNoise: the first step fails once by noise; it is
// measured again, passes, and the search goes up from it as if the noise
// had not been.
func TestSearchFirstStepNoise(t *testing.T) {
	f := &fakeBackend{capacity: 200}
	runs := 0
	step := func(ctx context.Context, level float64, length time.Duration) (Measure, error) {
		m, err := f.step(ctx, level, length)
		if runs++; runs == 1 {
			m.P99 = 400
		}
		return m, err
	}
	res, err := Search(context.Background(), Config{Objectives: search0Objs(), Start: 10, Step: time.Minute, Confirm: 5 * time.Minute,
		Now: func() time.Time { return f.now }}, step)
	if err != nil {
		t.Fatal(err)
	}
	if f.levels[0] != 10 || f.levels[1] != 10 || !res.Steps[1].Again || res.Steps[0].Again || f.levels[2] != 20 {
		t.Fatalf("levels %v: want 10 twice, then up", f.levels)
	}
	if res.Capacity > 200 || res.Capacity < 190 || !res.Confirmed {
		t.Fatalf("capacity %g (levels %v), want within 5%% below 200, confirmed", res.Capacity, f.levels)
	}
	// A first level that fails twice is left: the search halves.
	f = &fakeBackend{capacity: 3}
	res = search(t, f, Config{Start: 10})
	if f.levels[1] != 10 || f.levels[2] != 5 {
		t.Fatalf("levels %v", f.levels)
	}
}

// TestSearchContradiction: a failure below a level that passed at the
// same length or longer contradicts it (a longer run failing where a
// shorter one passed does not: it saw more). In a search, the failed
// confirmation of the answer steps down; the step-down level passed its
// search step, so its failing confirmation (noise here) is measured again,
// passes, and is the answer.
func TestSearchContradiction(t *testing.T) {
	s := &searcher{cfg: Config{Step: time.Second}}
	s.steps = []Step{{Level: 100, Length: time.Second, Pass: true}, {Level: 200, Length: 2 * time.Second, Pass: true}}
	if !s.contradicts(50, time.Second) || !s.contradicts(150, 2*time.Second) || s.contradicts(150, 4*time.Second) || s.contradicts(250, time.Second) {
		t.Fatal("contradicts: want a failure below a pass of at least its length to contradict it")
	}
	f := &fakeBackend{capacity: 100}
	runs := map[float64]int{}
	step := func(ctx context.Context, level float64, length time.Duration) (Measure, error) {
		m, err := f.step(ctx, level, length)
		runs[level]++
		if level == 80 && length > time.Minute {
			m.P99 = 60 // the queue the short step of 80 did not see
		}
		if level == 76 && runs[level] == 1 {
			m.P99 = 60 // noise
		}
		return m, err
	}
	res, err := Search(context.Background(), Config{Objectives: search0Objs(), Start: 80, Max: 80, Integer: true,
		Step: time.Minute, Confirm: 5 * time.Minute, Now: func() time.Time { return f.now }}, step)
	if err != nil {
		t.Fatal(err)
	}
	// 80 passes (at --max); its confirmation fails and steps down to 76,
	// whose confirmation fails by noise, is measured again and passes.
	if !equalLevels(f.levels, []float64{80, 80, 76, 76}) || res.Capacity != 76 || !res.Confirmed || !res.Steps[3].Again ||
		res.Steps[2].Again || res.Best != 3 || res.Steps[res.FirstFail].Level != 80 {
		t.Fatalf("levels %v capacity %g, want 80 80 76 76 and 76 confirmed on its second look", f.levels, res.Capacity)
	}
}

// TestSearchConfirmStepsDown: confirmations that keep failing step down by
// the resolution, at most MaxConfirms levels (each step-down run twice),
// and then no level is confirmed.
func TestSearchConfirmStepsDown(t *testing.T) {
	f := &fakeBackend{capacity: 200}
	step := func(ctx context.Context, level float64, length time.Duration) (Measure, error) {
		m, err := f.step(ctx, level, length)
		if length > time.Minute && level > 170 {
			m.P99 = 70
		}
		return m, err
	}
	res, err := Search(context.Background(), Config{Objectives: search0Objs(), Start: 200, Max: 200,
		Step: time.Minute, Confirm: 5 * time.Minute, Now: func() time.Time { return f.now }}, step)
	if err != nil {
		t.Fatal(err)
	}
	// 200 (max), confirm 200, 190 190, 180 180, 171 171: all fail.
	want := []float64{200, 200, 190, 190, 180, 180, 171, 171}
	if !equalLevels(f.levels, want) || res.Capacity != 0 || !res.Unconfirmed || res.Best != -1 {
		t.Fatalf("levels %v capacity %g, want %v and none confirmed", f.levels, res.Capacity, want)
	}
	// Below 171 the confirmations pass: four levels are enough for 170.
	f = &fakeBackend{capacity: 200}
	step2 := func(ctx context.Context, level float64, length time.Duration) (Measure, error) {
		m, err := f.step(ctx, level, length)
		if length > time.Minute && level > 185 {
			m.P99 = 70
		}
		return m, err
	}
	res, err = Search(context.Background(), Config{Objectives: search0Objs(), Start: 200, Max: 200,
		Step: time.Minute, Confirm: 5 * time.Minute, Now: func() time.Time { return f.now }}, step2)
	if err != nil || res.Capacity != 180 || !res.Confirmed || res.Steps[res.FirstFail].Level != 190 {
		t.Fatalf("levels %v capacity %g err %v, want 180 confirmed", f.levels, res.Capacity, err)
	}
}

// TestSearchConfirmFallsBack: when every level of the confirmations' walk
// fails (search steps too short to see the queue passed levels far above
// what the backend sustains), the highest level below them that passed a
// search step is confirmed, and the levels between it and the lowest
// failed confirmation are bisected with confirmation runs, up to
// MaxConfirms of them: resolved to 5% (no reason given), or with a finer
// resolution, the reason saying how far the answer stayed from the lowest
// failing rate; when the level below fails too, none is confirmed.
func TestSearchConfirmFallsBack(t *testing.T) {
	walk := []float64{100, 200, 200, 190, 190, 180, 180, 171, 171}
	for _, tc := range []struct {
		name       string
		sustains   float64 // the most a confirmation passes at
		resolution float64
		want       []float64
		capacity   float64
		reason     string
	}{
		{"resolved", 120, 0.05, append(walk, 100, 135, 117, 126, 121), 117, ""},
		{"not resolved", 120, 0.001, append(walk, 100, 135, 117, 126, 121), 117,
			"the confirmations from 200 down to 171 failed, and bisecting below them with confirmation runs ended at 117, 3% below the lowest failing rate"},
		{"none", 90, 0.05, append(walk, 100, 100), 0, "no confirmation run passed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeBackend{capacity: 200}
			step := func(ctx context.Context, level float64, length time.Duration) (Measure, error) {
				m, err := f.step(ctx, level, length)
				if length > time.Minute && level > tc.sustains {
					m.P99 = 70
				}
				return m, err
			}
			res, err := Search(context.Background(), Config{Objectives: search0Objs(), Start: 100, Max: 200, Resolution: tc.resolution,
				Step: time.Minute, Confirm: 5 * time.Minute, Now: func() time.Time { return f.now }}, step)
			if err != nil {
				t.Fatal(err)
			}
			if !equalLevels(f.levels, tc.want) || res.Capacity != tc.capacity || res.Confirmed != (tc.capacity > 0) || res.Unconfirmed != (tc.capacity == 0) {
				t.Fatalf("levels %v capacity %g confirmed %v; want %v and %g", f.levels, res.Capacity, res.Confirmed, tc.want, tc.capacity)
			}
			if tc.capacity > 0 && (!res.Steps[res.Best].Confirm || res.Steps[res.Best].Level != tc.capacity || res.Steps[res.FirstFail].Level != 121) {
				t.Errorf("best %d first fail %d: %+v", res.Best, res.FirstFail, res.Steps)
			}
			if res.Reason != tc.reason {
				t.Errorf("reason %q, want %q", res.Reason, tc.reason)
			}
		})
	}
}

// TestSearchLengthens: a step that cannot tell whether its load held is run
// twice as long, then four times, and judged on the longest; a step unsure
// at every length fails; a step whose objectives held but whose load grew
// is run once twice as long, whose verdict stands.
func TestSearchLengthens(t *testing.T) {
	f := &fakeBackend{capacity: 1000}
	step := func(ctx context.Context, level float64, length time.Duration) (Measure, error) {
		m, err := f.step(ctx, level, length)
		switch {
		case level == 640 && length < 4*time.Minute:
			m.Held = Steadiness{Verdict: HeldUnsure, Why: "mean latency grew from 10 ms to 14 ms through the step", Judged: true}
		case level == 640:
			m.Held = Steadiness{Verdict: HeldNo, Why: "mean latency grew from 10 ms to 30 ms through the step", Judged: true}
		case level >= 480 && level < 640:
			m.Held = Steadiness{Verdict: HeldUnsure, Why: "requests in flight grew from 3.0 to 5.5 through the step", Judged: true}
		case level == 320 && length == time.Minute:
			// A burst of the machine's in one step: held when run longer.
			m.Held = Steadiness{Verdict: HeldNo, Why: "mean latency grew from 10 ms to 40 ms through the step", Judged: true}
		}
		return m, err
	}
	res, err := Search(context.Background(), Config{Objectives: search0Objs(), Start: 10, Step: time.Minute,
		Now: func() time.Time { return f.now }}, step)
	if err != nil {
		t.Fatal(err)
	}
	var at640, at480, at320 []time.Duration
	for _, st := range res.Steps {
		switch st.Level {
		case 640:
			at640 = append(at640, st.Length)
		case 480:
			at480 = append(at480, st.Length)
		case 320:
			at320 = append(at320, st.Length)
			if st.Length == 2*time.Minute && (!st.Pass || !st.Longer) {
				t.Errorf("320 run longer: %+v, want a pass", st)
			}
		}
	}
	if len(at640) != 3 || at640[1] != 2*time.Minute || at640[2] != 4*time.Minute || len(at480) != 3 {
		t.Fatalf("lengths at 640 %v, at 480 %v: want 1, 2 and 4 minutes", at640, at480)
	}
	if len(at320) != 2 || at320[1] != 2*time.Minute {
		t.Fatalf("lengths at 320 %v: want 1 and 2 minutes (growth once, held when longer)", at320)
	}
	if res.Capacity >= 480 || res.Capacity < 320 {
		t.Fatalf("capacity %g, want below the unsure 480", res.Capacity)
	}
	// Unsure at every length: the longest step fails as not shown steady.
	var longest *Step
	for i := range res.Steps {
		if st := &res.Steps[i]; st.Level == 480 && st.Length == 4*time.Minute {
			longest = st
		}
	}
	if longest == nil || longest.Pass || !longest.Longer || longest.Held.Verdict != HeldUnsure {
		t.Errorf("480 at 4 minutes: %+v, want a failure, unsure, run longer", longest)
	}
}

// TestRoundRate: bisected rates keep three significant digits, rounded
// down, and more only to stay above the passing level.
func TestRoundRate(t *testing.T) {
	for _, c := range []struct{ v, above, want float64 }{
		{193.75, 0, 193}, {187.5, 0, 187}, {9.6875, 0, 9.68}, {4210, 0, 4210}, {12345, 0, 12300},
		{100.3, 100, 100.3}, {0.3, 0, 0.3}, {2.5, 0, 2.5},
	} {
		if got := RoundRate(c.v, c.above); got != c.want {
			t.Errorf("RoundRate(%g, %g) = %g, want %g", c.v, c.above, got, c.want)
		}
	}
	for v, want := range map[float64]string{187.5: "187.5", 4210: "4,210", 9.6875: "9.6875", 1234567.25: "1,234,567.25"} {
		if got := FormatRate(v); got != want {
			t.Errorf("FormatRate(%g) = %q, want %q", v, got, want)
		}
	}
}

func equalLevels(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSearchRetryIsTheSecondLook: a first level the client held back once
// and that then fails has had its second look: the search halves at once.
func TestSearchRetryIsTheSecondLook(t *testing.T) {
	f := &fakeBackend{capacity: 3}
	runs := 0
	step := func(ctx context.Context, level float64, length time.Duration) (Measure, error) {
		m, err := f.step(ctx, level, length)
		if runs++; runs == 1 {
			m.ClientLimit = "the client sent requests up to 80 ms late"
		}
		return m, err
	}
	_, err := Search(context.Background(), Config{Objectives: search0Objs(), Start: 10, Step: time.Minute,
		Now: func() time.Time { return f.now }}, step)
	if err != nil {
		t.Fatal(err)
	}
	if f.levels[0] != 10 || f.levels[1] != 10 || f.levels[2] != 5 {
		t.Fatalf("levels %v: want 10 (held back), 10 (fails), then 5", f.levels)
	}
}
