// Package builtin registers backbench's own protocols with
// internal/protocol: FastCGI (fcgi://, package fcgi) and HTTP/1.x (http://
// and https://, package httpprobe). Each is a thin adapter: it turns a
// plan's request and options into its client package's Config, and says
// what the protocol adds to the record, to the notes and to probe.
//
// The adapters live here rather than in fcgi and httpprobe so that the
// wire clients stay free of the registry and of the record (internal/stats):
// they are libraries the harness in bench/ and the tests use on their own.
// Package execute links this package; nothing else needs to.
package builtin

import (
	"github.com/backbench/backbench/internal/probe"
	"github.com/backbench/backbench/internal/protocol"
)

func init() {
	protocol.MustRegister(HTTP{})
	protocol.MustRegister(FCGI{})
}

// probeLines turns a probe's checks into the registry's lines.
func probeLines(named []probe.NamedCheck) []protocol.ProbeLine {
	var out []protocol.ProbeLine
	for _, l := range named {
		out = append(out, protocol.ProbeLine{Name: l.Name, Verdict: l.Verdict, Evidence: l.Evidence})
	}
	return out
}
