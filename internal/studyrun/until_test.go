package studyrun

import (
	"slices"
	"testing"
)

// TestSchedule: a round after the first runs exactly the series of the
// questions still open whose two sides can run, each once; decided and
// settled questions need nothing, and a question with a side given up
// stays open without running its other side.
func TestSchedule(t *testing.T) {
	// Series 0 is the baseline of 1, 2 and 3 at two levels; 4 against 3.
	qs := []question{{1, 0, 0}, {1, 0, 1}, {2, 0, 0}, {2, 0, 1}, {3, 0, 0}, {3, 0, 1}, {4, 3, 0}, {4, 3, 1}}
	cases := []struct {
		name     string
		decided  func(question) bool
		settled  func(question) bool
		runnable func(int) bool
		need     []bool
		open     int
	}{
		{"all open", func(question) bool { return false }, func(question) bool { return false }, func(int) bool { return true },
			[]bool{true, true, true, true, true}, 8},
		{"all decided", func(question) bool { return true }, func(question) bool { return false }, func(int) bool { return true },
			[]bool{false, false, false, false, false}, 0},
		// Only 2 against 0 at level 1 is open: series 0 and 2 run, at
		// every level (a round runs a series' levels together).
		{"one open", func(q question) bool { return q != question{2, 0, 1} }, func(question) bool { return false }, func(int) bool { return true },
			[]bool{true, false, true, false, false}, 1},
		// 4 against 3 open at one level, 1 against 0 at both: 0, 1, 3, 4.
		{"two pairs", func(q question) bool { return q.s == 2 || q.s == 3 || q == (question{4, 3, 1}) }, func(question) bool { return false }, func(int) bool { return true },
			[]bool{true, true, false, true, true}, 3},
		// Series 3 given up: 3 against 0 and 4 against 3 stay open but
		// run nothing; 4 does not run alone.
		{"side given up", func(q question) bool { return q.s == 1 || q.s == 2 }, func(question) bool { return false }, func(si int) bool { return si != 3 },
			[]bool{false, false, false, false, false}, 4},
		// Settled questions (a side that failed every request) are not
		// open.
		{"settled", func(question) bool { return false }, func(q question) bool { return q.s != 1 }, func(int) bool { return true },
			[]bool{true, true, false, false, false}, 2},
	}
	for _, c := range cases {
		need, open := schedule(qs, 5, c.decided, c.settled, c.runnable)
		if !slices.Equal(need, c.need) || open != c.open {
			t.Errorf("%s: need %v, open %d; want %v, %d", c.name, need, open, c.need, c.open)
		}
	}
}
