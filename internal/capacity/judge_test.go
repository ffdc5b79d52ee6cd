package capacity

import (
	"testing"

	"github.com/backbench/backbench/internal/stats"
)

// TestJudgeSummary: a summary gets its objectives' verdicts, none without
// objectives.
func TestJudgeSummary(t *testing.T) {
	s := &stats.Summary{Complete: 100, Spectrum: map[string]float64{"50": 1, "90": 2, "99": 40, "99.9": 50, "100": 60}}
	JudgeSummary(s, 100, nil)
	if s.SLO != nil {
		t.Fatalf("no objectives: %+v", s.SLO)
	}
	objs, err := ParseAll([]string{"p99<=50ms", "max<=50ms"})
	if err != nil {
		t.Fatal(err)
	}
	JudgeSummary(s, 100, objs)
	if len(s.SLO) != 2 || !s.SLO[0].Pass || s.SLO[1].Pass || s.SLO[1].Value != 60 {
		t.Errorf("verdicts %+v", s.SLO)
	}
}
