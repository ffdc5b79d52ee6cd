package trials

import (
	"strings"
	"testing"
	"time"
)

// TestUntilOptionsWords holds the errors of rounds until decided and
// their flags, given where they cannot apply, to the words the sweep
// command's users read (cmd/backbench's TestSweepUntilErrors: the same
// words exit with status 2 before any connection).
func TestUntilOptionsWords(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Repeat: 5, RepeatSet: true, MaxRepeat: DefaultMaxRepeat, Budget: time.Minute, BudgetSet: true}, "--budget needs --until decided"},
		{Options{Repeat: 1, MaxRepeat: 9, MaxRepeatSet: true}, "--max-repeat needs --precision P or --until decided"},
		{Options{Repeat: 1, Until: UntilDecided, Precision: "2%", MaxRepeat: DefaultMaxRepeat}, "two rules to stop the rounds"},
		{Options{Repeat: 2, RepeatSet: true, Until: UntilDecided, MaxRepeat: DefaultMaxRepeat}, "want at least 4 first rounds"},
		{Options{Repeat: 1, Until: "sure", MaxRepeat: DefaultMaxRepeat}, `--until "sure": want decided`},
		{Options{Repeat: 1, Until: UntilDecided, MaxRepeat: DefaultMaxRepeat, Budget: 0, BudgetSet: true}, "want more than 0"},
		{Options{Repeat: 1, Until: UntilDecided, MaxRepeat: 101, MaxRepeatSet: true}, "--max-repeat 101"},
	} {
		if _, err := c.o.Build(); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line with %q", c.o, err, c.want)
		}
	}
}
