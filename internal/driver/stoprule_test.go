package driver

import (
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/stats"
)

// TestStopRuleRatio: the stop rule's ratio is the failure ratio, a
// length failure counted once, and 1 where nothing finished.
func TestStopRuleRatio(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		complete, failed, length int64
		bound                    float64
		stop                     bool
		rate                     float64
		reason                   string
	}{
		{"clean", 100, 0, 0, 0, false, 0, ""},
		{"at the bound", 90, 10, 0, 0.1, false, 0.1, ""},
		{"above", 89, 11, 0, 0.1, true, 0.11, "11 of 100 requests failed at concurrency 7 (ratio 0.11 > 0.1): timeout 11"},
		{"length counted once", 100, 10, 10, 0.05, true, 0.1, "length 10"},
		{"nothing finished", 0, 0, 0, 0.5, true, 1, "no request finished at concurrency 7"},
		{"any failure", 99, 1, 0, 0, true, 0.01, "1 of 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stats.Summary{Concurrency: 7, Complete: tc.complete, Failed: tc.failed,
				Failures: stats.Failures{Length: tc.length, Timeout: tc.failed - tc.length}}
			if got := stopRatio(&s); got != tc.rate {
				t.Errorf("rate %v, want %v", got, tc.rate)
			}
			st := stopRule(&s, tc.bound, 1, false)
			if (st != nil) != tc.stop {
				t.Fatalf("stop %+v, want stop=%v", st, tc.stop)
			}
			if st != nil && (st.Concurrency != 7 || !strings.Contains(st.Reason, tc.reason)) {
				t.Errorf("stop %+v, want a reason with %q", st, tc.reason)
			}
		})
	}
}
