package capacity

import "github.com/backbench/backbench/internal/stats"

// Models of a search: levels are rates (open) or concurrencies (closed).
const (
	ModelOpen   = "open"
	ModelClosed = "closed"
)

// StepJSON is one step in capacity.json.
type StepJSON struct {
	// Rate is the asked rate in requests per second (open model; 0 in the
	// closed model).
	Rate float64 `json:"rate"`
	// Concurrency is the number of workers: the level in the closed model,
	// the in-flight ceiling in the open model.
	Concurrency int `json:"concurrency"`
	// AchievedRPS is the rate sent (open) or completed (closed).
	AchievedRPS float64 `json:"achieved_rps"`
	// P50Ms and P99Ms are latencies in ms.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	// ErrorRate is from 0 to 1.
	ErrorRate float64 `json:"error_rate"`
	// Pass reports that every objective held.
	Pass bool `json:"pass"`
	// Confirm marks a confirmation run.
	Confirm bool `json:"confirm"`
	// ClientLimit, when not empty, says how the client held the step back
	// (such a step is run again, up to twice).
	ClientLimit string `json:"client_limit,omitempty"`
	// LengthSeconds is how long the step ran (its counted time).
	LengthSeconds float64 `json:"length_seconds"`
	// Held is "yes" (the load was held: served within 2% of the rate, no
	// growth of the requests in flight or the latency through the step
	// beyond half of what a 5% overload adds), "unsure" (growth above
	// that but not clearly a queue: the step is run longer) or "no";
	// HeldReason says what grew or fell short.
	Held       string `json:"held"`
	HeldReason string `json:"held_reason,omitempty"`
	// LatencyHalvesMs and InFlightHalves are the step's halves' mean
	// latency (ms) and mean requests in flight (open model); ServedRPS
	// the rate of finished requests after the first tenth of the step
	// (open model); LatencyGrowthMs and InFlightGrowth the trends the
	// verdict rests on: how much the latency (ms) and the requests in
	// flight (open model) grew through the step. Absent when the step
	// was not judged.
	LatencyHalvesMs *[2]float64 `json:"latency_halves_ms,omitempty"`
	InFlightHalves  *[2]float64 `json:"in_flight_halves,omitempty"`
	LatencyGrowthMs *float64    `json:"latency_growth_ms,omitempty"`
	InFlightGrowth  *float64    `json:"in_flight_growth,omitempty"`
	ServedRPS       *float64    `json:"served_rps,omitempty"`
	// Again marks a second look at a failing level (the first level, or
	// one below a passing level); Longer a step run longer because the one
	// before it could not tell.
	Again  bool `json:"again,omitempty"`
	Longer bool `json:"longer,omitempty"`
	// SLO are the step's verdicts on the objectives, in order: the
	// measured value of each objective's metric and whether it held.
	SLO []stats.SLOResult `json:"slo_results"`
	// Records are the step's run records (one per run: a step is one);
	// absent in files written before they were kept.
	Records []*stats.Record `json:"records,omitempty"`
}

// ObjectiveJSON is one objective, parsed, in capacity.json.
type ObjectiveJSON struct {
	// Objective is the objective as given ("p99<=50ms").
	Objective string `json:"objective"`
	// Metric is p50, p90, p99, p99.9, max or errors.
	Metric string `json:"metric"`
	// Bound is the highest passing value: ms, or percent for errors.
	Bound float64 `json:"bound"`
}

// JSONReport is capacity.json's shape (a document of kind capacity,
// internal/document): a finished search, written by internal/report's
// Capacity.JSON and read back by compare and the report page.
type JSONReport struct {
	// Answer is the report's first line.
	Answer string `json:"answer"`
	// Model is "open" or "closed".
	Model string `json:"model"`
	// CapacityRPS (open model) or CapacityConcurrency (closed model) is
	// the answer; 0 when no step passed.
	CapacityRPS         *float64 `json:"capacity_rps,omitempty"`
	CapacityConcurrency *int     `json:"capacity_concurrency,omitempty"`
	// SLO are the objectives as given.
	SLO []string `json:"slo"`
	// Objectives are the objectives parsed, in the order of SLO.
	Objectives []ObjectiveJSON `json:"objectives"`
	// LimitedBy is "backend" or "client"; LimitedReason says why the
	// client limited the search.
	LimitedBy     string `json:"limited_by"`
	LimitedReason string `json:"limited_reason,omitempty"`
	// StoppedEarly reports that --max-time ended the search.
	StoppedEarly bool `json:"stopped_early"`
	// Interrupted reports that a signal ended the search.
	Interrupted bool `json:"interrupted"`
	// StepSeconds is the length of a step (-t) and ConfirmSeconds that of
	// the confirmation run (--confirm; 0: none); Confirmed reports that the
	// answer passed its confirmation run.
	StepSeconds    float64 `json:"step_seconds"`
	ConfirmSeconds float64 `json:"confirm_seconds"`
	Confirmed      bool    `json:"confirmed"`
	// Steps are every step run, in order.
	Steps []StepJSON `json:"steps"`
	// StartedAt and EndedAt are the search's start and end in Unix
	// seconds, Environment where it ran (with its command line), as in
	// a run record; absent in files written before they were recorded.
	StartedAt   float64            `json:"started_at,omitempty"`
	EndedAt     float64            `json:"ended_at,omitempty"`
	Environment *stats.Environment `json:"environment,omitempty"`
}
