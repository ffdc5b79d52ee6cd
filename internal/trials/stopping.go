package trials

import (
	"fmt"
	"math"
)

// How rounds run until decided stopped (Stopping.Stopped).
const (
	// StoppedDecided: every pair was decided.
	StoppedDecided = "decided"
	// StoppedBudget: the budget was spent.
	StoppedBudget = "budget"
	// StoppedMaxRepeat: the most rounds (max_repeat) ran.
	StoppedMaxRepeat = "max_repeat"
	// StoppedInterrupted: the run was interrupted.
	StoppedInterrupted = "interrupted"
	// StoppedNoSeries: no undecided pair had a side left to run (its
	// backends failed).
	StoppedNoSeries = "no_series"
)

// Stopping is how rounds run until decided ended: the JSON object
// "until" of a study and "stopping" of a sweep's trials.
type Stopping struct {
	// Stopped is one of the Stopped values.
	Stopped string `json:"stopped"`
	// Pairs counts the questions the rule looked at, a pair at a level
	// (its requests per second); Decided those it decided (a direction
	// or same).
	Pairs   int `json:"pairs"`
	Decided int `json:"decided"`
	// Rounds is the number of rounds run (a sweep's: the most at a
	// level); Seconds the time they took.
	Rounds  int     `json:"rounds"`
	Seconds float64 `json:"seconds"`
	// Confidence is that of the interval at every look
	// (trials.Sequential.LookConfidence).
	Confidence float64 `json:"confidence"`
}

// Text says how the rounds ended, for the notes: "rounds until decided:
// every pair decided after 7 rounds (12 of 12 pairs at a level, ...)".
func (u *Stopping) Text(budget float64, most int) string {
	return u.text(budget, most, "rounds until decided", "pair", "pairs (a pair at a level, by its req/s)", "rounds", "max_repeat")
}

// SavedText says how trials run until their comparisons against a saved
// run were decided (bench --until decided --against FILE) ended, for the
// notes: "trials until decided: every comparison with the saved run
// decided after 9 trials, in 3.1 s; 1 of 1 comparisons (req/s) ...";
// metrics names the metrics asked ("req/s", "req/s and p50").
func (u *Stopping) SavedText(budget float64, most int, metrics string) string {
	return u.text(budget, most, "trials until decided", "comparison with the saved run",
		fmt.Sprintf("comparisons with the saved run (by %s)", metrics), "trials", "--max-repeat")
}

// text is Text and SavedText: what runs until decided (head), one
// question (one), the questions counted (counted), what a round is called
// (unit: "rounds" in a sweep or a study, "trials" in bench) and the most
// rounds' name (most: max_repeat, --max-repeat).
func (u *Stopping) text(budget float64, most int, head, one, counted, unit, mostName string) string {
	var why string
	switch u.Stopped {
	case StoppedDecided:
		why = fmt.Sprintf("every %s decided after %d %s", one, u.Rounds, unit)
	case StoppedBudget:
		why = fmt.Sprintf("the budget (%s) was spent after %d %s", Duration(budget), u.Rounds, unit)
	case StoppedMaxRepeat:
		why = fmt.Sprintf("the most %s (%s %d) ran", unit, mostName, most)
	case StoppedInterrupted:
		why = fmt.Sprintf("interrupted after %d %s", u.Rounds, unit)
	default:
		why = fmt.Sprintf("no undecided %s had a side left to measure after %d %s", one, u.Rounds, unit)
	}
	looks := 1
	if u.Confidence < 1 {
		looks = max(int(math.Round(Alpha/(1-u.Confidence))), 1)
	}
	return fmt.Sprintf("%s: %s, in %s; %d of %d %s decided, "+
		"each look's interval at %s so that its %d planned looks keep the 5%% error rate",
		head, why, Duration(u.Seconds), u.Decided, u.Pairs, counted, ConfidenceText(u.Confidence), looks)
}
