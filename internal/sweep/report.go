package sweep

import (
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// Document is the saved sweep (document.Sweep) of res, the result of
// series run with cfg; backends names each series' backend (its factor
// "backend", "" for none).
func (cfg *Config) Document(series []Series, backends []string, res Result) document.Sweep {
	sw := document.Sweep{
		Levels:           cfg.Levels,
		RequestsPerLevel: cfg.Requests,
		SecondsPerLevel:  cfg.Duration.Seconds(),
		TimeTaken:        res.Elapsed.Seconds(),
		Interrupted:      res.Interrupted,
	}
	if cfg.StopOnErrors {
		r := cfg.StopErrorRate
		sw.StopErrorRate = &r
	}
	for i, sr := range res.Series {
		plan := series[i].Plan
		se := document.SweepSeries{Label: sr.Label, Backend: backends[i], Target: plan.Record().Target,
			KeepAlive: plan.KeepAlive, Levels: sr.Levels, Records: sr.Records}
		if se.Levels == nil {
			se.Levels = []stats.Summary{}
		}
		if sr.Stop != nil {
			se.Stop = &document.SweepStop{Concurrency: sr.Stop.Concurrency, ErrorRate: sr.Stop.ErrorRate, Reason: sr.Stop.Reason}
		}
		sw.Series = append(sw.Series, se)
	}
	return sw
}

// Mark records in sw, the saved form of the sweep j judged, each series'
// highest passing level (document.SweepSeries.SLOHighestPass); without
// objectives (the zero Judgement) it does nothing.
func (j *Judgement) Mark(sw *document.Sweep) {
	if j.Highest == nil {
		return
	}
	for i := range sw.Series {
		sw.Series[i].SLOHighestPass = &j.Highest[i]
	}
}

// TrialsDocument is what trials run by plan p add to a sweep's saved form:
// the plan, the comparisons of series (Comparisons, against baseline with
// the noise threshold noise, their false discoveries controlled together:
// trials.ControlFDR) and the notes, the sweep's own (notes) first. With
// rounds run until decided (p.Until), every verdict is the sequential
// rule's, and until says how the rounds ended (the driver's
// Result.Until), in the document and in a note.
func TrialsDocument(p trials.Plan, noise float64, baseline string, series []SeriesResult, backends, notes []string, until *trials.Stopping) *document.SweepTrials {
	var q *trials.Sequential
	if p.Until != "" {
		s := p.Sequential()
		q = &s
	}
	cs, pairNotes := comparisons(series, backends, baseline, noise, q)
	st := &document.SweepTrials{Repeat: p.Repeat, Precision: p.Precision, MaxRepeat: p.MaxRepeat,
		Seed: p.Seed, Noise: noise, Baseline: baseline,
		Comparisons: cs, Notes: append([]string{}, notes...)}
	if p.Until != "" {
		st.Until, st.BudgetSeconds, st.Stopping = p.Until, p.Budget.Seconds(), until
		if until != nil {
			st.Notes = append(st.Notes, until.Text(p.Budget.Seconds(), p.MaxRepeat))
		}
	}
	st.Notes = append(st.Notes, pairNotes...)
	if f := trials.ControlFDR(st.Comparisons, noise); f.Comparisons > 1 {
		st.FalseDiscoveries = &f
		st.Notes = append(st.Notes, "verdicts: "+f.Text())
	}
	st.Notes = append(st.Notes, trials.VerdictNotes(st.Comparisons)...)
	return st
}
