package probe

import (
	"fmt"
	"strings"
)

// Verdict is one check's verdict at one address, as a probe's lines give
// it: the check's name and its verdict word.
type Verdict struct {
	Check, Verdict string
}

// Disagreement is a check whose verdict differs between the addresses of
// a port range: verdicts by address (the JSON of "disagreements").
type Disagreement struct {
	Check    string            `json:"check"`
	Verdicts map[string]string `json:"verdicts"`
}

// Disagreements returns the checks whose verdicts differ between the
// addresses probed, in the order of the first address's checks: addrs[i]
// names the address whose checks are verdicts[i]. A check that an address
// did not run is not compared there. Never nil.
func Disagreements(addrs []string, verdicts [][]Verdict) []Disagreement {
	out := []Disagreement{}
	if len(verdicts) == 0 {
		return out
	}
	for _, l := range verdicts[0] {
		d := Disagreement{Check: l.Check, Verdicts: map[string]string{}}
		differ := false
		for i, vs := range verdicts {
			for _, m := range vs {
				if m.Check == l.Check {
					d.Verdicts[addrs[i]] = m.Verdict
					differ = differ || m.Verdict != l.Verdict
				}
			}
		}
		if differ {
			out = append(out, d)
		}
	}
	return out
}

// Text says d in one line, the addresses grouped by verdict in the order
// of addrs: "The addresses disagree on keep_alive: honored at tcp:A, tcp:B;
// ignored at tcp:C".
func (d Disagreement) Text(addrs []string) string {
	by := map[string][]string{}
	var order []string
	for _, a := range addrs {
		v, ok := d.Verdicts[a]
		if !ok {
			continue
		}
		if by[v] == nil {
			order = append(order, v)
		}
		by[v] = append(by[v], a)
	}
	var parts []string
	for _, v := range order {
		parts = append(parts, fmt.Sprintf("%s at %s", v, strings.Join(by[v], ", ")))
	}
	return fmt.Sprintf("The addresses disagree on %s: %s", d.Check, strings.Join(parts, "; "))
}
