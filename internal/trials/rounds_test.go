package trials

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestRoundsInterleaved(t *testing.T) {
	r := NewRounds(Plan{Repeat: 6, Seed: 42})
	var ran []int
	res, err := r.Level([]int{0, 1, 2}, func(s int) (float64, error) { ran = append(ran, s); return 100, nil })
	if err != nil || res.Rounds != 6 || len(ran) != 18 {
		t.Fatalf("Level: %+v, %v, ran %v: want 6 rounds of 3 trials", res, err, ran)
	}
	firsts := map[int]bool{}
	for k := range 6 {
		round := slices.Clone(ran[3*k : 3*k+3])
		if !slices.Equal(round, res.Orders[k]) {
			t.Errorf("round %d ran %v, Orders says %v", k, round, res.Orders[k])
		}
		firsts[round[0]] = true
		slices.Sort(round)
		if !slices.Equal(round, []int{0, 1, 2}) {
			t.Errorf("round %d ran %v: want every series once", k, ran[3*k:3*k+3])
		}
	}
	if len(firsts) < 2 {
		t.Errorf("the same series ran first in all 6 rounds: %v", res.Orders)
	}
	again, _ := NewRounds(Plan{Repeat: 6, Seed: 42}).Level([]int{0, 1, 2}, func(int) (float64, error) { return 1, nil })
	if !slices.EqualFunc(again.Orders, res.Orders, slices.Equal) {
		t.Errorf("same seed, other orders: %v and %v", res.Orders, again.Orders)
	}
}

func TestRoundsPrecision(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	// Series 0 is steady (±0.5%), series 1 noisy (±30%).
	trial := func(s int) (float64, error) {
		return 1000 * (1 + []float64{0.005, 0.3}[s]*(2*rng.Float64()-1)), nil
	}
	res, err := NewRounds(Plan{Repeat: 3, Precision: 0.03, MaxRepeat: 20}).Level([]int{0}, trial)
	if err != nil || res.Rounds != MinPreciseTrials || res.Imprecise != nil {
		t.Errorf("steady series: %+v, %v: want to stop after %d rounds, precise", res, err, MinPreciseTrials)
	}
	res, err = NewRounds(Plan{Repeat: 5, Precision: 0.03, MaxRepeat: 12}).Level([]int{0, 1}, trial)
	if err != nil || res.Rounds != 12 || !slices.Equal(res.Imprecise, []int{1}) {
		t.Errorf("noisy series: %+v, %v: want 12 rounds, series 1 imprecise", res, err)
	}
}

func TestRoundsStop(t *testing.T) {
	n := 0
	res, err := NewRounds(Plan{Repeat: 5}).Level([]int{0, 1}, func(int) (float64, error) {
		if n++; n == 3 {
			return 0, ErrStop
		}
		return 1, nil
	})
	if !errors.Is(err, ErrStop) || res.Rounds != 2 || n != 3 {
		t.Errorf("stopped at the third trial: %+v, %v, %d trials", res, err, n)
	}
}

func TestPlanValidate(t *testing.T) {
	for _, p := range []Plan{{Repeat: 0}, {Repeat: 101}, {Repeat: 5, Precision: 1.5, MaxRepeat: 20},
		{Repeat: 2, Precision: 0.02, MaxRepeat: 20}, {Repeat: 5, Precision: 0.02, MaxRepeat: 4}} {
		if p.Validate() == nil {
			t.Errorf("%+v: valid, want an error", p)
		}
	}
	for _, p := range []Plan{{Repeat: 1}, {Repeat: 5, Precision: 0.02, MaxRepeat: 20}} {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
}

// TestOptionsBuild: --precision alone starts from DefaultRepeat trials;
// a seed not given is a random one; every wrong option is refused with
// its one line.
func TestOptionsBuild(t *testing.T) {
	p, err := Options{Repeat: 1, Precision: "2%", MaxRepeat: DefaultMaxRepeat}.Build()
	if err != nil || p.Repeat != DefaultRepeat || p.Precision != 0.02 || p.MaxRepeat != DefaultMaxRepeat {
		t.Errorf("--precision 2%%: %+v, %v", p, err)
	}
	if p, err = (Options{Repeat: 3, RepeatSet: true, Seed: 7, SeedSet: true}).Build(); err != nil || p.Repeat != 3 || p.Seed != 7 {
		t.Errorf("--repeat 3 --seed 7: %+v, %v", p, err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Repeat: 3, Precision: "2"}, `bad --precision "2": want a percentage above 0% and below 100% (2%)`},
		{Options{Repeat: 3, Precision: "100%"}, `bad --precision "100%": want a percentage above 0% and below 100% (2%)`},
		{Options{Repeat: 3, MaxRepeat: 9, MaxRepeatSet: true}, "--max-repeat needs --precision P or --until decided"},
		{Options{Repeat: 0, RepeatSet: true}, "--repeat 0: want 1 to 100 trials"},
	} {
		if _, err := c.o.Build(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %s", c.o, err, c.want)
		}
	}
}

// untilTrial gives series 0 about 100 req/s, series 1 about 80 (±1%)
// and series 2 about 100 (±30%), from a seeded generator.
func untilTrial(ran map[int]int) func(int) (float64, error) {
	rng := rand.New(rand.NewPCG(3, 4))
	return func(s int) (float64, error) {
		ran[s]++
		j := 2*rng.Float64() - 1
		switch s {
		case 1:
			return 80 * (1 + 0.01*j), nil
		case 2:
			return 100 * (1 + 0.3*j), nil
		}
		return 100 * (1 + 0.01*j), nil
	}
}

// TestRoundsUntilDecided: with Until, the first Repeat rounds run every
// series; then only the series an undecided pair needs run: a pair
// decided (1 against 0) stops its series, a noisy one (2 against 0) runs
// to MaxRepeat, and the level says why it stopped and how many pairs
// were decided.
func TestRoundsUntilDecided(t *testing.T) {
	ran := map[int]int{}
	p := Plan{Repeat: 4, MaxRepeat: 20, Until: UntilDecided, Noise: 0.02, Seed: 7, Pairs: [][2]int{{1, 0}, {2, 0}}}
	res, err := NewRounds(p).Step([]int{0, 1, 2}, 1, untilTrial(ran))
	if err != nil {
		t.Fatal(err)
	}
	if res.Rounds != 20 || res.Stopped != StoppedMaxRepeat || res.Pairs != 2 || res.Decided != 1 {
		t.Errorf("%d rounds, stopped %q, %d of %d decided: want 20, max_repeat, 1 of 2", res.Rounds, res.Stopped, res.Decided, res.Pairs)
	}
	if ran[0] != 20 || ran[2] != 20 || ran[1] >= 20 || ran[1] < 4 {
		t.Errorf("trials run %v: want 20 of series 0 and 2, fewer (at least 4) of series 1", ran)
	}
	for k, o := range res.Orders {
		if k < 4 && len(o) != 3 {
			t.Errorf("round %d ran %v: the first rounds run every series", k+1, o)
		}
	}

	// The decided pair alone: the rounds end when it is decided.
	ran = map[int]int{}
	p.Pairs = [][2]int{{1, 0}}
	res, err = NewRounds(p).Step([]int{0, 1, 2}, 1, untilTrial(ran))
	if err != nil || res.Stopped != StoppedDecided || res.Rounds >= 20 || res.Decided != 1 {
		t.Errorf("%+v, %v: want decided before 20 rounds", res, err)
	}
	if ran[2] != 4 {
		t.Errorf("series 2, in no pair, ran %d trials: want the first 4 only", ran[2])
	}

	// A budget spent: no round past the first ones.
	ran = map[int]int{}
	p.Pairs, p.Budget = [][2]int{{2, 0}}, time.Nanosecond
	res, err = NewRounds(p).Step([]int{0, 1, 2}, 3, untilTrial(ran))
	if err != nil || res.Stopped != StoppedBudget || res.Rounds != 4 {
		t.Errorf("%+v, %v: want the budget spent after the first 4 rounds", res, err)
	}

	// A side gone (its backend lost): its pair is not waited for.
	p.Budget = 0
	res, err = NewRounds(p).Step([]int{0, 1, 2}, 1, func(s int) (float64, error) {
		if s == 2 {
			return math.NaN(), nil
		}
		return 100, nil
	})
	if err != nil || res.Stopped != StoppedNoSeries || res.Rounds != 4 {
		t.Errorf("%+v, %v: want no series left after the first 4 rounds", res, err)
	}
}

// TestUntilOptions: --until decided takes 4 first rounds by default,
// allows --max-repeat, and refuses --budget without it, --precision with
// it and fewer than 4 first rounds.
func TestUntilOptions(t *testing.T) {
	p, err := Options{Repeat: 1, Until: UntilDecided, MaxRepeat: 30, MaxRepeatSet: true}.Build()
	if err != nil || p.Repeat != DefaultMinRounds || p.MaxRepeat != 30 {
		t.Errorf("%+v, %v: want 4 first rounds, at most 30", p, err)
	}
	for _, o := range []Options{
		{Repeat: 5, Budget: time.Minute, BudgetSet: true},
		{Repeat: 5, MaxRepeat: 9, MaxRepeatSet: true},
		{Repeat: 5, Until: UntilDecided, Precision: "2%", MaxRepeat: 20},
		{Repeat: 3, RepeatSet: true, Until: UntilDecided, MaxRepeat: 20},
		{Repeat: 5, Until: "precise", MaxRepeat: 20},
		{Repeat: 8, RepeatSet: true, Until: UntilDecided, MaxRepeat: 6, MaxRepeatSet: true},
	} {
		if _, err := o.Build(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
