package capacity

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTableFit: a capacity table whose verdicts make rows wider than 100
// columns puts those verdicts under their rows, wrapped, and no line is
// wider; a table that fits is printed as Table prints it.
func TestTableFit(t *testing.T) {
	f := &fakeBackend{capacity: 20}
	res := search(t, f, Config{Start: 8, Integer: true})
	r := Report{Model: ModelClosed, Objectives: search0Objs(), Result: res}
	var table, fit strings.Builder
	if err := r.Table(&table); err != nil {
		t.Fatal(err)
	}
	if err := r.TableFit(&fit, 100); err != nil {
		t.Fatal(err)
	}
	if table.String() != fit.String() {
		t.Errorf("a table that fits was changed:\n%s\n---\n%s", table.String(), fit.String())
	}
	for i := range r.Result.Steps {
		st := &r.Result.Steps[i]
		if !st.Pass {
			st.Again, st.Longer, st.ClientLimit = true, true, "the client's CPU was saturated"
		}
	}
	table.Reset()
	fit.Reset()
	r.Table(&table)
	if err := r.TableFit(&fit, 100); err != nil {
		t.Fatal(err)
	}
	widest := func(s string) int {
		n := 0
		for _, l := range strings.Split(s, "\n") {
			n = max(n, utf8.RuneCountInString(l))
		}
		return n
	}
	if widest(table.String()) <= 100 {
		t.Fatalf("the test needs a table wider than 100 columns:\n%s", table.String())
	}
	if n := widest(fit.String()); n > 100 {
		t.Errorf("fitted table of %d columns:\n%s", n, fit.String())
	}
	if got, want := strings.Count(fit.String(), "FAIL"), strings.Count(table.String(), "FAIL"); got != want {
		t.Errorf("%d FAIL verdicts fitted, %d in the table", got, want)
	}
	if !strings.Contains(fit.String(), "\n    FAIL ") {
		t.Errorf("no verdict under its row:\n%s", fit.String())
	}
}
