package studyrun

import (
	"testing"

	"github.com/backbench/backbench/internal/stats"
)

// TestTargetSteps: a step's per-target figures sum the trials' counts and
// take the medians of their times over the trials in which the target
// completed a request; trials of one request, or of other targets, give
// none.
func TestTargetSteps(t *testing.T) {
	trial := func(p50a, p50b float64, completeB int64) *stats.Summary {
		return &stats.Summary{Targets: []stats.TargetSummary{
			{Target: "GET /a", Weight: 3, Requests: 30, Complete: 29, Failed: 1, P50Ms: p50a, P99Ms: 2 * p50a, MaxMs: 3 * p50a, BodyBytes: 290},
			{Target: "POST /b", Weight: 1, Requests: 10, Complete: completeB, Failed: 10 - completeB, P50Ms: p50b, P99Ms: 2 * p50b, MaxMs: 3 * p50b, BodyBytes: 10 * completeB},
		}}
	}
	got := targetSteps([]*stats.Summary{trial(1, 5, 10), trial(3, 0, 0), trial(2, 7, 10)})
	if len(got) != 2 {
		t.Fatalf("targets %+v", got)
	}
	a, b := got[0], got[1]
	if a.Target != "GET /a" || a.Weight != 3 || a.Requests != 90 || a.Failed != 3 || a.BodyBytes != 870 ||
		a.P50Ms.Median != 2 || a.P99Ms.Median != 4 || a.MaxMs.Median != 6 {
		t.Errorf("GET /a: %+v", a)
	}
	// POST /b completed nothing in the second trial: its medians are of
	// the other two (5 and 7), not of a zero.
	if b.Requests != 30 || b.Failed != 10 || b.BodyBytes != 200 || b.P50Ms.Median != 6 || b.P99Ms.Median != 12 {
		t.Errorf("POST /b: %+v", b)
	}
	if got := targetSteps([]*stats.Summary{{}, {}}); got != nil {
		t.Errorf("one request: %+v", got)
	}
	other := trial(1, 1, 10)
	other.Targets[1].Target = "POST /c"
	if got := targetSteps([]*stats.Summary{trial(1, 1, 10), other}); got != nil {
		t.Errorf("trials of other targets: %+v", got)
	}
}
