package studyrun

import (
	"fmt"
	"time"

	"github.com/backbench/backbench/internal/driver"
)

// Progress is where a study stands when a round or a run begins, for a
// live line (Options.Progress).
type Progress struct {
	// Round is the round running, from 1, of Rounds.
	Round, Rounds int
	// EndsAt is the study's estimated end, from the time the rounds so far
	// took (zero during the first round).
	EndsAt time.Time
	// Config and Series name the configuration and the series running
	// ("" at the start of a round, before its first run); Concurrency is
	// the run's level and Warmup says it is a warm-up.
	Config, Series string
	Concurrency    int
	Warmup         bool
	// Requests is the run's request budget (0 with a time limit alone);
	// Done, when not nil, counts the requests it finished so far (from
	// any goroutine).
	Requests int64
	Done     func() int64
}

// progress is the rounds' timing.
type progress struct {
	// first is when the first round began, begun when the current one did.
	first, begun time.Time
	cur          Progress
	// open says the rounds run until decided: their count is a most, so
	// no end is estimated from it.
	open bool
}

// endsAt estimates the study's end when round (of rounds) begins at now:
// the rounds so far took (now - first) / (round - 1) each; zero before
// the first has ended.
func (p *progress) endsAt(round, rounds int, now time.Time) time.Time {
	if round <= 1 || p.first.IsZero() {
		return time.Time{}
	}
	per := now.Sub(p.first) / time.Duration(round-1)
	return now.Add(per * time.Duration(rounds-round+1))
}

// roundBegins logs "round 2 of 5, ends about 12:41:05" (the end once a
// round has ended) and tells Options.Progress.
func (r *runner) roundBegins(round, rounds int) {
	if ends := r.markRound(round, rounds); ends.IsZero() {
		r.logf("round %d of %d", round, rounds)
	} else {
		r.logf("round %d of %d, ends about %s (from the rounds so far)", round, rounds, Clock(ends))
	}
}

// markRound keeps a round's start, tells Options.Progress of it, and
// returns the study's estimated end (zero before a round has ended).
func (r *runner) markRound(round, rounds int) time.Time {
	now := time.Now()
	if round == 1 || r.prog.first.IsZero() {
		r.prog.first = now
	}
	r.prog.begun = now
	var ends time.Time
	if !r.prog.open {
		ends = r.prog.endsAt(round, rounds, now)
	}
	r.prog.cur = Progress{Round: round, Rounds: rounds, EndsAt: ends}
	if r.o.Progress != nil {
		r.o.Progress(r.prog.cur)
	}
	return ends
}

// runBegins tells Options.Progress of the driver's run p, idx mapping
// the driver's series to the study's.
func (r *runner) runBegins(p driver.Progress, idx []int) {
	cur := r.prog.cur
	if p.SeriesIndex >= 0 && p.SeriesIndex < len(idx) {
		se := &r.res.Series[idx[p.SeriesIndex]]
		cur.Series = se.Label
		cur.Config = r.res.Configurations[se.Config].Name
	}
	cur.Concurrency, cur.Warmup, cur.Requests, cur.Done = p.Concurrency, p.Warmup, p.Requests, p.Done
	r.o.Progress(cur)
}

// Clock is a time of day as the progress lines give it, "12:41:05", with
// the date when it is not today ("2026-12-08 00:10:05").
func Clock(t time.Time) string {
	now := time.Now()
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04:05")
}

// String is the live line's text: "round 2 of 5; series transport=unix
// keepalive=on, c=4: 120/200 requests; ends about 12:41:05" (the series'
// label names its configuration's levels too).
func (p Progress) String() string {
	s := fmt.Sprintf("round %d of %d", p.Round, p.Rounds)
	if p.Series != "" {
		s += "; series " + p.Series + fmt.Sprintf(", c=%d", p.Concurrency)
		if p.Warmup {
			s += " warm-up"
		}
		if p.Done != nil {
			if p.Requests > 0 {
				s += fmt.Sprintf(": %d/%d requests", p.Done(), p.Requests)
			} else {
				s += fmt.Sprintf(": %d requests", p.Done())
			}
		}
	}
	if !p.EndsAt.IsZero() {
		s += "; ends about " + Clock(p.EndsAt)
	} else {
		s += "; the end time comes after the first round"
	}
	return s
}
