package studyrun

import (
	"fmt"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/studyfile"
)

// seriesPlan makes the plan of one series of study st at its target t:
// the series' client-side levels (keep-alive, HTTP/1.0) and the backend's
// request options (TLS, document root, headers), checked and built as
// bench's flags would give them (plan.Options), the request count left to
// the schedule.
func seriesPlan(st *studyfile.Study, s *studyfile.Series, t Target) (*execute.Plan, error) {
	b := s.Config.Backend
	o := plan.Defaults(t.URL)
	o.RequestsSet = true
	if st.Measure.Timeout > 0 {
		o.Timeout = st.Measure.Timeout
	}
	o.KeepAlive = s.Levels[studyfile.FactorKeepalive] == "on"
	o.HTTP10 = s.Levels[studyfile.FactorHTTP] == "1.0"
	o.Insecure, o.DocumentRoot, o.Headers = b.Insecure, t.DocumentRoot, t.Headers
	me := &st.Measure
	o.Targets, o.AccessLog, o.LogFormat, o.ReplayMethods = me.Targets, me.AccessLog, me.LogFormat, me.ReplayMethods
	l, err := o.Build()
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %v", s.Label, load.RedactURL(t.URL), err)
	}
	l.Plan.ClientCPUs = st.Measure.ClientCPUs
	return l.Plan, nil
}
