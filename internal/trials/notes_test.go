package trials

import (
	"strings"
	"testing"
)

// TestDesignWarning checks the warning said before any request: 3 trials
// a side cannot reach p < Alpha (at best p = 2/C(6,3) = 0.1) and 4 is the
// least that can; 4 and more say nothing.
func TestDesignWarning(t *testing.T) {
	w := DesignWarning(3)
	for _, want := range []string{"3 trials a side cannot give p < 0.05", "at best p = 0.1)", "--repeat 4"} {
		if !strings.Contains(w, want) {
			t.Errorf("DesignWarning(3) = %q, want %q in it", w, want)
		}
	}
	if w := DesignWarning(1); !strings.HasPrefix(w, "1 trial a side has no interval and no test") {
		t.Errorf("DesignWarning(1) = %q", w)
	}
	for _, n := range []int{4, 5, 10} {
		if w := DesignWarning(n); w != "" {
			t.Errorf("DesignWarning(%d) = %q, want none", n, w)
		}
	}
}

// TestVerdictNotes checks the notes of verdicts not given: one trial a
// side, too few trials for the test, and short trials, each said once;
// nothing for comparisons that have their verdicts.
func TestVerdictNotes(t *testing.T) {
	for _, tc := range []struct {
		name string
		cs   []Comparison
		want []string
	}{
		{"verdicts", []Comparison{{Verdict: "faster", Trials: 5, BaselineTrials: 5}}, nil},
		{"one trial", []Comparison{{Verdict: NoVerdict, Trials: 1, BaselineTrials: 1}, {Verdict: NoVerdict, Trials: 1, BaselineTrials: 1}},
			[]string{"\u2013, 1 trial: a side has one trial"}},
		{"three trials", []Comparison{{Verdict: NoVerdict, Trials: 3, BaselineTrials: 3}},
			[]string{"\u2013, 3 trials: 3 trials against 3 cannot give p < 0.05"}},
		{"unanswered", []Comparison{{Verdict: NoVerdict, Trials: 3, BaselineTrials: 3, Unanswered: UnansweredSeries}}, nil},
		{"short", []Comparison{{Verdict: "faster", Trials: 5, BaselineTrials: 5, ShortTrials: 2}}, []string{ShortNote}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := VerdictNotes(tc.cs)
			if len(got) != len(tc.want) {
				t.Fatalf("VerdictNotes = %q, want %d notes", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("note %d = %q, want it to start %q", i, got[i], w)
				}
			}
		})
	}
}

// TestShortTrialNote checks the note of a short trial: its length when it
// lasted less than MinTrialSeconds, the client CPU when that was not
// measured, nothing for a trial long enough.
func TestShortTrialNote(t *testing.T) {
	if n := ShortTrialNote("trial 2", Trial{Seconds: 0.25, ClientCPUMeasured: true}); n != "trial 2 lasted 0.25 s, less than 1 s: too short to trust; lengthen it with -n (more requests) or -t (more seconds)" {
		t.Errorf("short: %q", n)
	}
	if n := ShortTrialNote("trial 1", Trial{Seconds: 3}); !strings.Contains(n, "had no measurable client CPU time") {
		t.Errorf("no CPU: %q", n)
	}
	if n := ShortTrialNote("trial 1", Trial{Seconds: 3, ClientCPUMeasured: true}); n != "" {
		t.Errorf("long enough: %q", n)
	}
}

// TestPlanDescribe checks the line that says how the trials ran: their
// count (per level for a sweep) or the precision rule, and the seed.
func TestPlanDescribe(t *testing.T) {
	for _, tc := range []struct {
		p        Plan
		perLevel bool
		want     string
	}{
		{Plan{Repeat: 5, Seed: 7}, false, "Trials: 5 trials, in rounds shuffled with --seed 7"},
		{Plan{Repeat: 3, Seed: 1}, true, "Trials: 3 trials per level, in rounds shuffled with --seed 1"},
		{Plan{Repeat: 5, Precision: 0.02, MaxRepeat: 30, Seed: 2}, false, "Trials: trials until the req/s interval is within ±2% (from 5, at most 30), in rounds shuffled with --seed 2"},
	} {
		if got := tc.p.Describe(tc.perLevel); got != tc.want {
			t.Errorf("Describe(%v) = %q, want %q", tc.perLevel, got, tc.want)
		}
	}
}

// TestPlanWarning: a plan's warning is DesignWarning of its Repeat, or of
// its MaxRepeat with a precision.
func TestPlanWarning(t *testing.T) {
	need := MinTrialsForVerdict()
	if w := (Plan{Repeat: 1}).Warning(); w != DesignWarning(1) || w == "" {
		t.Errorf("1 trial: %q", w)
	}
	if w := (Plan{Repeat: need}).Warning(); w != "" {
		t.Errorf("%d trials: %q", need, w)
	}
	if w := (Plan{Repeat: need, Precision: 0.02, MaxRepeat: 1}).Warning(); w != DesignWarning(1) {
		t.Errorf("precision, --max-repeat 1: %q", w)
	}
}
