package protocol

import (
	"github.com/backbench/backbench/internal/probe"
)

func init() {
	MustRegister(HTTP{})
	MustRegister(FCGI{})
}

// probeLines turns a probe's checks into the registry's lines.
func probeLines(named []probe.NamedCheck) []ProbeLine {
	var out []ProbeLine
	for _, l := range named {
		out = append(out, ProbeLine{Name: l.Name, Verdict: l.Verdict, Evidence: l.Evidence})
	}
	return out
}
