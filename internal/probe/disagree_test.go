package probe

import (
	"reflect"
	"testing"
)

// TestDisagreements checks the checks a port range disagrees on: in the
// first address's order, only those whose verdicts differ, every address
// that ran them named, and the line that groups the addresses by verdict.
func TestDisagreements(t *testing.T) {
	addrs := []string{"tcp:a", "tcp:b", "tcp:c"}
	vs := [][]Verdict{
		{{"keep_alive", "honored"}, {"get_values", "answered"}, {"pipelining", "yes"}},
		{{"keep_alive", "ignored"}, {"get_values", "answered"}, {"pipelining", "yes"}},
		{{"keep_alive", "honored"}, {"get_values", "answered"}},
	}
	got := Disagreements(addrs, vs)
	want := []Disagreement{{Check: "keep_alive", Verdicts: map[string]string{"tcp:a": "honored", "tcp:b": "ignored", "tcp:c": "honored"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Disagreements = %+v, want %+v", got, want)
	}
	if s := got[0].Text(addrs); s != "The addresses disagree on keep_alive: honored at tcp:a, tcp:c; ignored at tcp:b" {
		t.Errorf("Text = %q", s)
	}
	if got := Disagreements(addrs[:2], [][]Verdict{vs[0], vs[0]}); got == nil || len(got) != 0 {
		t.Errorf("agreeing addresses: %+v, want an empty list", got)
	}
}
