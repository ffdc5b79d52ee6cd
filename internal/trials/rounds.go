package trials

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Plan says how many trials each series runs at a level.
type Plan struct {
	// Repeat is the number of trials of every series before the precision
	// rule is looked at (at least 1).
	Repeat int
	// Precision, if above 0, adds rounds until every series' requests/sec
	// interval lies within ±Precision of its median (a fraction: 0.02 for
	// 2%), or MaxRepeat trials have run.
	Precision float64
	// MaxRepeat bounds the trials with Precision or Until.
	MaxRepeat int
	// Until, UntilDecided, runs the rounds until every pair of series in
	// Pairs is decided by the sequential rule on its requests/sec, and
	// every question of Saved on its metric (Sequential: from Repeat
	// rounds, at least DefaultMinRounds, to MaxRepeat, at the band 1 ±
	// Noise): after the first Repeat rounds, each round runs only the
	// series an undecided pair or question needs. "" for none.
	Until string
	// Budget, with Until, bounds the time of all the rounds of a command
	// (0: none): each level's rounds beyond the first get an equal share
	// of what is left of it (Rounds.Step).
	Budget time.Duration
	// Noise is the band of Until (0.02 for 1 ± 2%).
	Noise float64
	// Pairs are the pairs of series (indexes) Until looks at, each
	// series and its baseline.
	Pairs [][2]int
	// Saved are the questions Until asks of series against a saved run
	// (bench --against FILE), beside Pairs: each a series against trials
	// saved before, on one metric.
	Saved []SavedPair
	// Seed seeds the order of the series within each round.
	Seed uint64
}

// SavedPair is a question that rounds run until decided ask of a series
// against a saved run (bench --repeat --until decided --against FILE):
// the trials of Series (an index) against Baseline, the saved trials,
// which no round adds to, on Metric (a Metric name), judged as the
// comparison of the two is (CompareLevel, then the sequential rule with
// the saved side taken whole: Sequential.Saved).
type SavedPair struct {
	Series   int
	Metric   string
	Baseline []Trial
}

// Limits of a Plan.
const (
	// DefaultRepeat is the number of trials with --precision alone.
	DefaultRepeat = 5
	// DefaultMaxRepeat bounds the trials of --precision by default.
	DefaultMaxRepeat = 20
	// MaxRepeat is the largest --repeat or --max-repeat.
	MaxRepeat = 100
	// MinPrecisionRepeat is the fewest first trials with --precision.
	MinPrecisionRepeat = 3
	// UntilDecided is Plan.Until of rounds run until every pair is
	// decided.
	UntilDecided = "decided"
)

// Sequential is the rule of p's rounds run until decided.
func (p Plan) Sequential() Sequential {
	return Sequential{MinRounds: max(p.Repeat, DefaultMinRounds), MaxRounds: p.MaxRepeat, Noise: p.Noise}
}

// Validate checks p; its errors are one line for the command line.
func (p Plan) Validate() error {
	switch {
	case p.Repeat < 1 || p.Repeat > MaxRepeat:
		return fmt.Errorf("--repeat %d: want 1 to %d trials", p.Repeat, MaxRepeat)
	case p.Precision < 0 || p.Precision >= 1:
		return fmt.Errorf("--precision %g%%: want more than 0%% and less than 100%%", 100*p.Precision)
	case p.Precision > 0 && p.Repeat < MinPrecisionRepeat:
		return fmt.Errorf("--repeat %d with --precision: want at least %d first trials", p.Repeat, MinPrecisionRepeat)
	case p.Precision > 0 && (p.MaxRepeat < p.Repeat || p.MaxRepeat > MaxRepeat):
		return fmt.Errorf("--max-repeat %d: want from --repeat (%d) to %d", p.MaxRepeat, p.Repeat, MaxRepeat)
	case p.Until != "" && p.Until != UntilDecided:
		return fmt.Errorf("--until %q: want decided", p.Until)
	case p.Until != "" && p.Precision > 0:
		return errors.New("--until decided and --precision: two rules to stop the rounds; give one")
	case p.Until != "" && p.Repeat < DefaultMinRounds:
		return fmt.Errorf("--repeat %d with --until decided: want at least %d first rounds (the sequential rule's first look)", p.Repeat, DefaultMinRounds)
	case p.Until != "" && (p.MaxRepeat < p.Repeat || p.MaxRepeat > MaxRepeat):
		return fmt.Errorf("--max-repeat %d: want from --repeat (%d) to %d", p.MaxRepeat, p.Repeat, MaxRepeat)
	case p.Budget < 0 || p.Budget > 0 && p.Until == "":
		return errors.New("--budget: only with --until decided, and more than 0")
	case len(p.Saved) > 0 && p.Until == "":
		return errors.New("questions against a saved run: only with --until decided")
	}
	return nil
}

// Options are the trial flags as given (--repeat and --precision, one
// of which at least was).
type Options struct {
	// Repeat is --repeat, RepeatSet whether it was given (with
	// --precision alone: DefaultRepeat).
	Repeat    int
	RepeatSet bool
	// Precision is --precision as given: a percentage ("2%"), or "".
	Precision string
	// MaxRepeat is --max-repeat, MaxRepeatSet whether it was given (it
	// needs --precision).
	MaxRepeat    int
	MaxRepeatSet bool
	// Seed is --seed, SeedSet whether it was given (if not, a random
	// seed).
	Seed    uint64
	SeedSet bool
	// Until is --until ("" when not given; decided); Budget is --budget,
	// BudgetSet whether it was given (it needs --until).
	Until     string
	Budget    time.Duration
	BudgetSet bool
}

// Build checks the options and makes the plan (Validate); its errors are
// one line for the command line.
func (o Options) Build() (Plan, error) {
	p := Plan{Repeat: o.Repeat, MaxRepeat: o.MaxRepeat, Seed: o.Seed, Until: o.Until, Budget: o.Budget}
	if o.BudgetSet && o.Until == "" {
		return p, errors.New("--budget needs --until decided")
	}
	if o.BudgetSet && o.Budget <= 0 {
		return p, fmt.Errorf("--budget %v: want more than 0 (without --budget: none)", o.Budget)
	}
	if o.Until != "" && !o.RepeatSet {
		p.Repeat = DefaultMinRounds
	}
	if o.Precision != "" {
		v, ok := strings.CutSuffix(strings.TrimSpace(o.Precision), "%")
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || !(f > 0 && f < 100) {
			return p, fmt.Errorf("bad --precision %q: want a percentage above 0%% and below 100%% (2%%)", o.Precision)
		}
		p.Precision = f / 100
		if !o.RepeatSet {
			p.Repeat = DefaultRepeat
		}
	} else if o.MaxRepeatSet && o.Until == "" {
		return p, errors.New("--max-repeat needs --precision P or --until decided")
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	if !o.SeedSet {
		p.Seed = rand.Uint64() >> 1
	}
	return p, nil
}

// Rounds runs the trials of every level of a command in interleaved
// rounds: trial k of every series before trial k+1 of any, the order of
// the series within a round shuffled (seeded by Plan.Seed) so that no
// series always runs first.
type Rounds struct {
	plan Plan
	rng  *rand.Rand
	// began is when the first step began (for Plan.Budget).
	began time.Time
}

// NewRounds returns the rounds of plan, which must be valid.
func NewRounds(plan Plan) *Rounds {
	return &Rounds{plan: plan, rng: rand.New(rand.NewPCG(plan.Seed, 0x6261636b62656e63))}
}

// ErrStop, returned by a trial function, ends the level and the command
// (an interruption): Level returns it after what ran so far.
var ErrStop = errors.New("trials: stopped")

// LevelResult says how the rounds of one level went.
type LevelResult struct {
	// Rounds is the number of rounds run.
	Rounds int
	// Orders holds the order of the series (their indexes) in each round.
	Orders [][]int
	// Imprecise lists the series (indexes) whose interval was still wider
	// than the precision asked when MaxRepeat trials had run; nil without
	// Precision.
	Imprecise []int
	// With Plan.Until: Stopped says why the rounds ended (a Stopped
	// value), Pairs counts the pairs looked at (those whose both sides
	// ran at the level) and Decided those the sequential rule decided.
	Stopped        string
	Pairs, Decided int
}

// Level runs the rounds of one level over the given series (indexes):
// Step with this level the last.
func (r *Rounds) Level(series []int, trial func(s int) (float64, error)) (LevelResult, error) {
	return r.Step(series, 1, trial)
}

// Step runs the rounds of one level over the given series (indexes);
// left is the number of levels still to run, this one included, among
// which what is left of Plan.Budget is shared. trial runs one trial of
// a series and returns its requests/sec, which the precision rule and the
// sequential rule read (NaN: the series has no trial to give, its
// backend lost); an error ends the level (ErrStop after an
// interruption).
func (r *Rounds) Step(series []int, left int, trial func(s int) (float64, error)) (LevelResult, error) {
	return r.StepTrials(series, left, func(s int) (Trial, error) {
		v, err := trial(s)
		return Trial{RequestsPerSecond: v}, err
	})
}

// StepTrials is Step with every figure of a trial: trial returns the
// trial's Trial (its RequestsPerSecond NaN when the series has no trial
// to give), whose requests/sec the precision rule and the pairs read, and
// whose metrics the questions against a saved run (Plan.Saved) read.
func (r *Rounds) StepTrials(series []int, left int, trial func(s int) (Trial, error)) (LevelResult, error) {
	var res LevelResult
	if r.began.IsZero() {
		r.began = time.Now()
	}
	begun := time.Now()
	// share is the time this level's rounds may take, the first rounds
	// past it or not (with a budget).
	var share time.Duration
	if b := r.plan.Budget; b > 0 {
		share = max((b-time.Since(r.began))/time.Duration(max(left, 1)), 0)
	}
	values := map[int][]Trial{}
	gone := map[int]bool{}
	most := r.plan.Repeat
	if r.plan.Precision > 0 || r.plan.Until != "" {
		most = r.plan.MaxRepeat
	}
	q := r.plan.Sequential()
	pending := append([]int(nil), series...)
	var last time.Duration
	for res.Rounds < most && len(pending) > 0 {
		if r.plan.Until != "" && res.Rounds >= r.plan.Repeat {
			pending = r.undecided(q, series, values, gone, &res)
			if len(pending) == 0 {
				break
			}
			// The next round is expected to last as long as the last
			// one did: it does not begin unless it fits in the share.
			if r.plan.Budget > 0 && time.Since(begun)+last > share {
				res.Stopped = StoppedBudget
				break
			}
		}
		roundStart := time.Now()
		order := append([]int(nil), pending...)
		r.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		res.Orders = append(res.Orders, order)
		res.Rounds++
		for _, s := range order {
			v, err := trial(s)
			if err != nil {
				return res, err
			}
			if math.IsNaN(v.RequestsPerSecond) {
				gone[s] = true
				continue
			}
			values[s] = append(values[s], v)
		}
		last = time.Since(roundStart)
		if res.Rounds < r.plan.Repeat {
			continue
		}
		if r.plan.Until != "" {
			continue
		}
		if r.plan.Precision <= 0 {
			break
		}
		// Every series still runs every round while one is imprecise:
		// the rounds stay interleaved, and a precise series only gets
		// more precise.
		done := true
		for _, s := range pending {
			if !Median(rps(values[s])).Precise(r.plan.Precision) {
				done = false
			}
		}
		if done {
			pending = nil
		}
	}
	if r.plan.Until != "" {
		open := r.undecided(q, series, values, gone, &res)
		switch {
		case res.Stopped != "":
		case len(open) == 0 && res.Decided == res.Pairs:
			res.Stopped = StoppedDecided
		case len(open) == 0 && res.Rounds < most:
			res.Stopped = StoppedNoSeries
		default:
			res.Stopped = StoppedMaxRepeat
		}
	}
	if r.plan.Precision > 0 {
		for _, s := range series {
			if !Median(rps(values[s])).Precise(r.plan.Precision) {
				res.Imprecise = append(res.Imprecise, s)
			}
		}
	}
	return res, nil
}

// rps returns the requests/sec of ts.
func rps(ts []Trial) []float64 { return values(ts, metrics[0].get) }

// undecided looks at the pairs of the plan whose both sides are among
// series, by the sequential rule q on their requests/sec so far, and at
// the questions against a saved run whose series is among them
// (savedDecided): it counts them and those decided in res, and returns
// the series that an undecided pair or question still needs (both sides
// of a pair), in the order of series. A pair is settled, neither decided
// nor needing more, when a side is gone without a trial or every trial of
// a side had no request per second (it never answered: no verdict to
// wait for); a side gone keeps its pair from running.
func (r *Rounds) undecided(q Sequential, series []int, values map[int][]Trial, gone map[int]bool, res *LevelResult) []int {
	in := map[int]bool{}
	for _, s := range series {
		in[s] = true
	}
	need := map[int]bool{}
	res.Pairs, res.Decided = 0, 0
	silent := func(s int) bool {
		for _, v := range values[s] {
			if v.RequestsPerSecond > 0 {
				return false
			}
		}
		return true
	}
	for _, p := range r.plan.Pairs {
		s, b := p[0], p[1]
		if !in[s] || !in[b] {
			continue
		}
		res.Pairs++
		if q.Decide(rps(values[s]), rps(values[b]), Faster, Slower).Verdict != Undecided {
			res.Decided++
			continue
		}
		if silent(s) || silent(b) || gone[s] || gone[b] {
			continue
		}
		need[s], need[b] = true, true
	}
	for _, p := range r.plan.Saved {
		if !in[p.Series] {
			continue
		}
		res.Pairs++
		decided, settled := q.savedDecided(p, values[p.Series], r.plan.Noise)
		if decided {
			res.Decided++
			continue
		}
		if settled || silent(p.Series) || gone[p.Series] {
			continue
		}
		need[p.Series] = true
	}
	var out []int
	for _, s := range series {
		if need[s] {
			out = append(out, s)
		}
	}
	return out
}

// savedDecided judges the question p against a saved run on ts, the
// trials of its series so far, as the comparison of the two will be
// judged (CompareLevel at noise, then q with the saved side whole): it
// reports whether the question is decided (a direction or Same), and
// whether it is settled, undecided but needing no more rounds: the
// comparison has no verdict whatever the rounds (a side unanswered or
// mostly failed, a metric of the backend not sampled on both sides), or
// the saved trials are too few for the rule to decide by its last look
// (FirstLook).
func (q Sequential) savedDecided(p SavedPair, ts []Trial, noise float64) (decided, settled bool) {
	q.Saved = SavedBaseline
	if q.FirstLook(len(p.Baseline)) == 0 {
		return false, true
	}
	for _, c := range CompareLevel("", "", 0, ts, p.Baseline, noise) {
		if c.Metric != p.Metric {
			continue
		}
		if c.Unanswered != "" || c.MostlyFailed != "" {
			return false, true
		}
		d, _ := q.DecideMetric(p.Metric, ts, p.Baseline)
		return d.Verdict != Undecided, false
	}
	return false, true
}
