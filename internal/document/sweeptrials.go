package document

import "github.com/backbench/backbench/internal/trials"

// SweepTrials is what a sweep of repeated trials (--repeat, --precision)
// adds to its Sweep; its fields appear in sweep.json's top object.
type SweepTrials struct {
	// Repeat is the number of first trials per series and level;
	// Precision (a fraction) and MaxRepeat the precision rule, 0 if none.
	Repeat    int     `json:"repeat"`
	Precision float64 `json:"precision"`
	MaxRepeat int     `json:"max_repeat"`
	// Seed seeded the order of the series within each round.
	Seed uint64 `json:"seed"`
	// Noise is the noise threshold of the verdicts (a fraction).
	Noise float64 `json:"noise"`
	// Until is "decided" when the rounds ran until every pair was
	// decided (--until decided; "" for fixed rounds): Repeat is then the
	// first rounds, MaxRepeat the most, BudgetSeconds the --budget (0 for
	// none), and Stopping says how the rounds ended.
	Until         string           `json:"until,omitempty"`
	BudgetSeconds float64          `json:"budget_seconds,omitempty"`
	Stopping      *trials.Stopping `json:"stopping,omitempty"`
	// Baseline is the label of the series the others are compared with.
	Baseline string `json:"baseline"`
	// Comparisons compare every series with the baseline (and each ka
	// series with its no-ka) at every level, for requests/sec and p99.
	Comparisons []trials.Comparison `json:"comparisons"`
	// FalseDiscoveries says how the false directions among Comparisons
	// were controlled (nil without a comparison with a test, and in
	// files of older versions).
	FalseDiscoveries *trials.FDR `json:"false_discoveries,omitempty"`
	// Notes name the levels whose interval did not get within the
	// precision asked.
	Notes []string `json:"notes"`
}
