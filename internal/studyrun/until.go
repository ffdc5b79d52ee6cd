package studyrun

import (
	"time"

	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/trials"
)

// question is what rounds run until decided ask: a pair of series (s
// against its baseline b, indexes into the result's series) at a
// concurrency level (an index into the measure's levels).
type question struct{ s, b, level int }

// questions are every pair of res at every level.
func questions(res *study.Result) []question {
	var qs []question
	for _, p := range res.Pairs() {
		for li := range res.Measure.Levels {
			qs = append(qs, question{p[0], p[1], li})
		}
	}
	return qs
}

// schedule says which of n series the next round runs: those of the
// questions still open that both sides can still answer (runnable), each
// series once however many questions need it. A question is open when it
// is not decided and no side of it is judged without a verdict (settled).
// It returns the series to run and the questions open, runnable or not.
func schedule(qs []question, n int, decided, settled func(question) bool, runnable func(si int) bool) (need []bool, open int) {
	need = make([]bool, n)
	for _, q := range qs {
		if settled(q) || decided(q) {
			continue
		}
		open++
		if runnable(q.s) && runnable(q.b) {
			need[q.s], need[q.b] = true, true
		}
	}
	return need, open
}

// trialsOf are the kept trials of series si at level index li, in the
// order of the rounds.
func (r *runner) trialsOf(si, li int) []trials.Trial {
	kept := r.series[si].levels[li].trials
	ts := make([]trials.Trial, len(kept))
	for i, s := range kept {
		ts[i] = stats.TrialOf(s)
	}
	return ts
}

// next is the schedule of the next round of a study run until decided
// (schedule), from the trials so far: a question is decided when the
// sequential rule q decides its requests per second, settled when a side
// has no trial or every request of a side failed (no verdict to wait
// for); a series is runnable while its configuration is not given up.
func (r *runner) next(q trials.Sequential, qs []question) (need []bool, open int) {
	decided := func(x question) bool { return q.RoundsDecided(r.trialsOf(x.s, x.level), r.trialsOf(x.b, x.level)) }
	settled := func(x question) bool {
		s, b := r.trialsOf(x.s, x.level), r.trialsOf(x.b, x.level)
		return !r.runnable(x.s) && len(s) == 0 || !r.runnable(x.b) && len(b) == 0 || trials.AllFailed(s) || trials.AllFailed(b)
	}
	return schedule(qs, len(r.series), decided, settled, r.runnable)
}

// runnable reports whether series si can still be measured: its
// configuration is not given up.
func (r *runner) runnable(si int) bool { return !r.configs[r.res.Series[si].Config].dead }

// count counts the true values of bs.
func count(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// stopping records how rounds run until decided ended, from the trials
// at the end, and adds its note.
func (r *runner) stopping(q trials.Sequential, qs []question, stopped string, began time.Time) {
	_, open := r.next(q, qs)
	if stopped == "" {
		switch {
		case open == 0:
			stopped = study.StoppedDecided
		case r.res.Incomplete:
			stopped = study.StoppedInterrupted
		default:
			stopped = study.StoppedMaxRepeat
		}
	}
	decided := 0
	for _, x := range qs {
		if q.RoundsDecided(r.trialsOf(x.s, x.level), r.trialsOf(x.b, x.level)) {
			decided++
		}
	}
	u := &study.Stopping{Stopped: stopped, Pairs: len(qs), Decided: decided, Rounds: r.res.Rounds,
		Seconds: time.Since(began).Seconds(), Confidence: q.LookConfidence()}
	r.res.Until = u
	r.res.Notes = append(r.res.Notes, u.Text(r.res.Measure.BudgetSeconds, r.res.Measure.MaxRepeat))
	r.logf("%s", r.res.Notes[len(r.res.Notes)-1])
}
