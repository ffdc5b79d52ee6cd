package trials

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
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
		{Options{Repeat: 3, MaxRepeat: 9, MaxRepeatSet: true}, "--max-repeat needs --precision P"},
		{Options{Repeat: 0, RepeatSet: true}, "--repeat 0: want 1 to 100 trials"},
	} {
		if _, err := c.o.Build(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %s", c.o, err, c.want)
		}
	}
}
