package sweep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
	"github.com/backbench/backbench/sockets"
)

// FactorsOf returns the factors of a series from what its result s says
// of its plan (target, keep-alive, HTTP version, upstreams), and backend,
// the label the user gave it ("" for none).
func FactorsOf(backend string, s *stats.Summary) trials.Factors {
	f := trials.Factors{Protocol: s.Target.Protocol, Transport: s.Target.Network, KeepAlive: s.KeepAlive,
		HTTPVersion: s.HTTPVersion, Upstreams: max(len(s.Upstreams), 1), Backend: backend}
	var tls bool
	f.Protocol, tls = protocolFactor(s.Target.Protocol)
	if tls || s.TLS != nil || sockets.SchemeUsesTLS(sockets.SchemeOf(s.Target.URL)) {
		f.TLS = true
	}
	return f
}

// PlanFactors returns the factors of a plan (the backend left unnamed).
func PlanFactors(p *execute.Plan) trials.Factors {
	r := p.Record()
	f := trials.Factors{Protocol: r.Target.Protocol, Transport: r.Target.Network, KeepAlive: p.KeepAlive,
		HTTPVersion: r.HTTPVersion, TLS: p.TLS != nil, Upstreams: max(len(r.Upstreams), 1)}
	var tls bool
	if f.Protocol, tls = protocolFactor(r.Target.Protocol); tls {
		f.TLS = true
	}
	return f
}

// protocolFactor returns the protocol factor of a recorded scheme: its
// protocol's name (https is HTTP, over TLS) and whether the scheme is TLS.
// A scheme without a protocol is its own value.
func protocolFactor(scheme string) (name string, tls bool) {
	pr, err := protocol.Lookup(scheme)
	if err != nil {
		return scheme, false
	}
	return pr.Name(), sockets.Target{Scheme: scheme}.UsesTLS()
}

// FactorWords is what tells f apart among fs, the factors of the URLs of
// one label: " unix", " fcgi HTTP/1.0", " tls", " 3 upstreams" (keep-alive
// is --keepalive-modes' own suffix); "" when nothing does.
func FactorWords(f trials.Factors, fs []trials.Factors) string {
	var words []string
	for _, name := range []string{trials.FactorTransport, trials.FactorProtocol, trials.FactorHTTPVersion, trials.FactorTLS, trials.FactorUpstreams} {
		differ := false
		for _, o := range fs {
			differ = differ || slices.Contains(trials.Differences(f, o), name)
		}
		if !differ {
			continue
		}
		switch w := f.Level(name); name {
		case trials.FactorTLS:
			words = append(words, map[bool]string{true: "tls", false: "no-tls"}[f.TLS])
		case trials.FactorUpstreams:
			words = append(words, w+" upstreams")
		default:
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return ""
	}
	return " " + strings.Join(words, " ")
}

// Comparisons pairs the series (trials.Pairs: transport at each
// keep-alive mode, keep-alive on each transport, every backend against
// the baseline's, a deployment apart against the baseline's with what
// else differs named...) and compares each pair at every level both
// ran, grouped by factor. backends names each series' backend (the LABEL
// of LABEL=URL, "" for none); baseline is a series or backend label. The
// notes say how labels were read, which backend pairs differ in more than
// the backend, why a series that never answered has no verdict, and which
// series nothing could be paired with.
func Comparisons(series []SeriesResult, backends []string, baseline string, noise float64) ([]trials.Comparison, []string) {
	return comparisons(series, backends, baseline, noise, nil)
}

// PlanPairs returns the pairs of series (indexes, each series and its
// baseline) that Comparisons will compare, from their plans
// (PlanFactors) before any run: what rounds run until decided look at
// (trials.Plan.Pairs). backends and baseline are as Comparisons takes
// them.
func PlanPairs(series []Series, backends []string, baseline string) [][2]int {
	fs := make([]trials.Factors, len(series))
	baseBackend := ""
	for i, s := range series {
		fs[i] = PlanFactors(s.Plan)
		fs[i].Backend = backends[i]
		if s.Label == baseline || backends[i] == baseline {
			baseBackend = backends[i]
		}
	}
	pairs, _ := trials.Pairs(fs, baseBackend)
	out := make([][2]int, len(pairs))
	for i, p := range pairs {
		out[i] = [2]int{p.Series, p.Baseline}
	}
	return out
}

// comparisons is Comparisons; with q not nil (rounds run until
// decided), every verdict is the sequential rule's (q.Judge).
func comparisons(series []SeriesResult, backends []string, baseline string, noise float64, q *trials.Sequential) ([]trials.Comparison, []string) {
	out := []trials.Comparison{}
	var idx []int
	var fs []trials.Factors
	baseBackend := ""
	for i, s := range series {
		if len(s.Levels) == 0 {
			continue
		}
		idx = append(idx, i)
		fs = append(fs, FactorsOf(backends[i], &s.Levels[0]))
		if s.Label == baseline || backends[i] == baseline {
			baseBackend = backends[i]
		}
	}
	pairs, unpaired := trials.Pairs(fs, baseBackend)
	var notes []string
	var unanswered failedSeries
	// kaIgnored are the keep-alive series whose backend closed every
	// kept connection at some level of a keep-alive pair.
	var kaIgnored []string
	walked := make([]trials.Series, len(idx))
	for j, i := range idx {
		walked[j] = stats.SeriesOf(series[i].Label, series[i].Levels)
	}
	walk := make([]trials.SeriesPair, len(pairs))
	for i, pr := range pairs {
		walk[i] = trials.SeriesPair{Series: pr.Series, Baseline: pr.Baseline, Factor: pr.Factor, Title: pr.Title(fs)}
	}
	out = append(out, trials.ComparePairs(walked, walk, noise, nil, func(at trials.LevelPair, cs []trials.Comparison) {
		s, b := &series[idx[at.Series]], &series[idx[at.Baseline]]
		sl, bl := &s.Levels[at.Level], &b.Levels[at.BaselineLevel]
		if q != nil {
			st, bt := stats.TrialsOf(sl), stats.TrialsOf(bl)
			for k := range cs {
				q.Judge(&cs[k], st, bt, noise)
			}
		}
		for k := range cs {
			cs[k].Why = unansweredWhy(&cs[k], s.Label, b.Label, sl, bl, &unanswered)
		}
		if at.Factor == trials.FactorKeepAlive && sl.ClosedEvery() && !slices.Contains(kaIgnored, s.Label) {
			kaIgnored = append(kaIgnored, s.Label)
		}
	})...)
	if len(kaIgnored) > 0 {
		notes = append(notes, trials.KeepAliveIgnored(kaIgnored))
	}
	if trials.LabelsAreNames(fs) {
		for _, pr := range pairs {
			if pr.Factor != trials.FactorBackend {
				notes = append(notes, "every URL has a label of its own, so the labels are taken as names of one backend reached in different ways: "+
					"series that differ in one setting are compared on it (a protocol apart, they are two backends); "+
					"if they are different backends, each such verdict is on the two deployments as a whole; "+
					"give the URLs of one backend the same label (LABEL=URL) to say which share a backend")
				break
			}
		}
	}
	said := map[string]bool{}
	for _, pr := range pairs {
		s, b := series[idx[pr.Series]], series[idx[pr.Baseline]]
		if len(pr.Also) == 0 {
			continue
		}
		key := backends[idx[pr.Series]] + "\x00" + pr.AlsoText(fs)
		if said[key] {
			continue
		}
		said[key] = true
		notes = append(notes, fmt.Sprintf("%s differs from %s in more than the backend (%s): nothing else pairs them, so they are compared as two deployments, "+
			"and the backend verdicts are on the whole of each, not on the backend alone", s.Label, b.Label, pr.AlsoText(fs)))
	}
	for _, f := range unanswered {
		slices.Sort(f.levels)
		levels := make([]string, len(f.levels))
		for i, l := range f.levels {
			levels[i] = strconv.Itoa(l)
		}
		notes = append(notes, fmt.Sprintf("%s: every request failed at c=%s (%s): no verdict on a series that never answered",
			f.label, strings.Join(levels, ", "), f.why))
	}
	for _, u := range unpaired {
		var d []string
		for j := range fs {
			if j != u {
				d = append(d, fmt.Sprintf("from %s in %s", series[idx[j]].Label, trials.DescribeDifferences(fs[u], fs[j])))
			}
		}
		notes = append(notes, fmt.Sprintf("%s differs from every other series in more than one factor (%s), and no label makes it a backend to compare: not compared",
			series[idx[u]].Label, strings.Join(d, "; ")))
	}
	return out, notes
}

// UnansweredWhy returns why the side of c that never answered
// (c.Unanswered: series, baseline or both) failed, from the results of
// the levels compared, s of series and b of baseline: "tls: every
// request failed (connect: the server's TLS certificate does not verify:
// ...)"; "" when both answered.
func UnansweredWhy(c *trials.Comparison, series, baseline string, s, b *stats.Summary) string {
	return unansweredWhy(c, series, baseline, s, b, nil)
}

// unansweredWhy is UnansweredWhy that also records the failures in
// failed, if not nil, for the notes.
func unansweredWhy(c *trials.Comparison, series, baseline string, s, b *stats.Summary, failed *failedSeries) string {
	if c.Unanswered == "" {
		return ""
	}
	var whys []string
	for _, side := range []struct {
		label string
		s     *stats.Summary
		on    bool
	}{{series, s, c.Unanswered != trials.UnansweredBaseline}, {baseline, b, c.Unanswered != trials.UnansweredSeries}} {
		if side.on {
			w := failureWords(side.s)
			whys = append(whys, fmt.Sprintf("%s: every request failed (%s)", side.label, w))
			if failed != nil {
				failed.add(side.label, w, side.s.Concurrency)
			}
		}
	}
	return strings.Join(whys, "; ")
}

// failedSeries are the series whose every request failed at some
// levels, each with the words of its failures, for one note each.
type failedSeries []failedAt

// failedAt is a series whose every request failed, why, at levels.
type failedAt struct {
	label, why string
	levels     []int
}

// add records that series label's every request failed at level c, for
// why.
func (fs *failedSeries) add(label, why string, c int) {
	for i := range *fs {
		if f := &(*fs)[i]; f.label == label && f.why == why {
			if !slices.Contains(f.levels, c) {
				f.levels = append(f.levels, c)
			}
			return
		}
	}
	*fs = append(*fs, failedAt{label, why, []int{c}})
}

// failureWords names the failures of s: its most frequent error sample
// ("connect: connection refused", "connect: the server's TLS certificate
// does not verify: ..."), or its failure classes without one.
func failureWords(s *stats.Summary) string {
	best := -1
	for i, e := range s.ErrorSamples {
		if best < 0 || e.Count > s.ErrorSamples[best].Count {
			best = i
		}
	}
	if best >= 0 {
		return s.ErrorSamples[best].Message
	}
	var cls []string
	for c, n := range s.Failures.ByClass() {
		if n > 0 {
			cls = append(cls, load.ErrClass(c).String())
		}
	}
	return strings.Join(cls, ", ") + " failures"
}

// ShortTrials counts the trials too short to trust (trials.Trial.Short)
// of a sweep, for one note (Note). Its zero value is ready.
type ShortTrials struct {
	n, all   int
	shortest float64
	labels   []string
}

// Add counts the trial of series label whose result is s.
func (st *ShortTrials) Add(label string, s *stats.Summary) {
	st.all++
	if t := stats.TrialOf(s); t.Short() {
		if st.n == 0 || t.Seconds < st.shortest {
			st.shortest = t.Seconds
		}
		st.n++
		if !slices.Contains(st.labels, label) {
			st.labels = append(st.labels, label)
		}
	}
}

// Note is the sweep's note of its short trials, "" without any.
func (st *ShortTrials) Note() string {
	if st.n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d trials (of %s) lasted less than %g s (the shortest %.3g s) or had no measurable client CPU time: too short to trust; lengthen them with -n (more requests per level) or -t (seconds per level)",
		st.n, st.all, strings.Join(st.labels, ", "), trials.MinTrialSeconds, st.shortest)
}
