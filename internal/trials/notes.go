package trials

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// KeepAliveIgnored is the sentence of a keep-alive comparison whose
// keep-alive side's backend closed every kept connection
// (stats.Summary.ClosedEvery): names are those sides (a study's
// configurations, a sweep's series). A study's answer and a sweep's notes
// say it alike: that comparison is of two ways of paying a connection a
// request, not of keep-alive.
func KeepAliveIgnored(names []string) string {
	return "keep-alive did not apply to " + strings.Join(names, ", ") + ": the backend closed every kept connection"
}

// VerdictNotes explains, once each, the verdicts the comparisons cs could
// not give (too few trials for the rank test) and the marker of short
// trials (ShortNote) and the verdicts withheld for a side's failures
// (MostlyFailedNote).
func VerdictNotes(cs []Comparison) []string {
	var notes []string
	few, short, mostly := false, false, false
	for _, c := range cs {
		if c.MostlyFailed != "" && !mostly {
			mostly = true
			notes = append(notes, MostlyFailedNote())
		}
		if n := min(c.Trials, c.BaselineTrials); c.Verdict == NoVerdict && c.Unanswered == "" && c.MostlyFailed == "" && !few {
			few = true
			if n <= 1 {
				notes = append(notes, fmt.Sprintf("\u2013, 1 trial: a side has one trial, so there is no interval and no verdict; run with --repeat %d or more",
					MinTrialsForVerdict()+1))
			} else {
				notes = append(notes, fmt.Sprintf("\u2013, %d trials: %d trials against %d cannot give p < %g (Mann-Whitney, two-sided), so there is no verdict; use %d or more a side (--repeat %d)",
					n, c.Trials, c.BaselineTrials, Alpha, MinTrialsForVerdict(), MinTrialsForVerdict()+1))
			}
		}
		short = short || c.ShortTrials > 0
	}
	if short {
		notes = append(notes, ShortNote)
	}
	return notes
}

// MostlyFailedNote explains MostlyFailedText: the rule of MaxFailedRatio.
func MostlyFailedNote() string {
	return fmt.Sprintf("%s: more than %.0f%% of a side's requests failed, so its latencies and CPU per request are those of its failures "+
		"or of the few requests that got through: no verdict on them; its req/s keeps its verdict, with its failures", MostlyFailedText, 100*MaxFailedRatio)
}

// DesignWarning is the warning, said before any request, that n trials a
// side (a plan's Repeat, or its MaxRepeat with a precision) cannot give a
// verdict: fewer than the rank test needs to reach p < Alpha (CanReach).
// It is "" when they can.
func DesignWarning(n int) string {
	if CanReach(n, n) {
		return ""
	}
	need := MinTrialsForVerdict()
	what := fmt.Sprintf("%d trials a side cannot give p < %g (Mann-Whitney, two-sided: at best p = %.3g)", n, Alpha, 2*math.Exp(-lchoose(2*n, n)))
	if n == 1 {
		what = "1 trial a side has no interval and no test"
	}
	return fmt.Sprintf("%s, so no comparison of this run can have a verdict; the smallest count that can is %d (--repeat %d; 5 gives an interval of 93.75%%)",
		what, need, need)
}

// Warning is DesignWarning of the trials p asks for: its Repeat, or its
// MaxRepeat with a precision or rounds until decided.
func (p Plan) Warning() string {
	n := p.Repeat
	if p.Precision > 0 || p.Until != "" {
		n = p.MaxRepeat
	}
	return DesignWarning(n)
}

// ShortTrialNote is the note of a trial too short to trust (Short), named
// what ("trial 2"), naming the flags that lengthen it; "" for a trial
// long enough.
func ShortTrialNote(what string, t Trial) string {
	if !t.Short() {
		return ""
	}
	why := fmt.Sprintf("lasted %.3g s, less than %g s", t.Seconds, MinTrialSeconds)
	if t.Seconds >= MinTrialSeconds {
		why = "had no measurable client CPU time"
	}
	return fmt.Sprintf("%s %s: too short to trust; lengthen it with -n (more requests) or -t (more seconds)", what, why)
}

// Describe is the line that says how the trials of p ran, its seed
// included: "Trials: 5 trials, in rounds shuffled with --seed 7"; perLevel
// says "per level" (a sweep's trials run at every level).
func (p Plan) Describe(perLevel bool) string {
	s := fmt.Sprintf("%d trials", p.Repeat)
	if perLevel {
		s += " per level"
	}
	if p.Precision > 0 {
		s = fmt.Sprintf("trials until the req/s interval is within ±%g%% (from %d, at most %d)", 100*p.Precision, p.Repeat, p.MaxRepeat)
	}
	switch {
	case p.Until != "" && len(p.Saved) > 0 && len(p.Pairs) == 0:
		s = fmt.Sprintf("trials until the comparisons with the saved run (by %s) are decided (the first %d, at most %d", p.SavedMetrics(), p.Repeat, p.MaxRepeat)
		if p.Budget > 0 {
			s += ", within " + Duration(p.Budget.Seconds())
		}
		s += ")"
	case p.Until != "":
		s = fmt.Sprintf("rounds until every pair is decided (the first %d every series, at most %d", p.Repeat, p.MaxRepeat)
		if perLevel {
			s += " per level"
		}
		if p.Budget > 0 {
			s += ", within " + Duration(p.Budget.Seconds())
		}
		s += ")"
	}
	return fmt.Sprintf("Trials: %s, in rounds shuffled with --seed %d", s, p.Seed)
}

// SavedMetrics names the metrics of p's questions against a saved run
// (Plan.Saved), each once in the order of the tables, as --fail-on's
// rules say them: "req/s", "req/s and p50".
func (p Plan) SavedMetrics() string {
	var words []string
	for _, m := range metrics {
		if slices.ContainsFunc(p.Saved, func(q SavedPair) bool { return q.Metric == m.name }) {
			words = append(words, m.word)
		}
	}
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
