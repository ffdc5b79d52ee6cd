package procstat

import (
	"os"
	"testing"
)

// TestPSS reads this process's PSS: above 0 and at most its RSS summed
// (smaps_rollup's Rss line); a process that is gone is an error.
func TestPSS(t *testing.T) {
	pss, err := PSS(os.Getpid())
	if err != nil {
		t.Skipf("smaps_rollup cannot be read here: %v", err)
	}
	r, _ := readRollup(os.Getpid())
	if pss <= 0 || pss > r.rss*2 {
		t.Errorf("PSS %d, RSS %d", pss, r.rss)
	}
	if _, err := PSS(1 << 30); err == nil {
		t.Error("no error for a process that does not exist")
	}
}
