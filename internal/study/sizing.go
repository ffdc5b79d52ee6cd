package study

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/backbench/backbench/internal/trials"
)

// Sizing is a capacity study's measurement and answer: the capacity within
// the objectives at each level of the factor that sizes the pool (its
// workers), with the pool's memory and CPU at that load.
type Sizing struct {
	// Factor is the sized factor's name; Setting the backend's own name of
	// it ("pm.max_children"), "" when the file gives none.
	Factor  string `json:"factor"`
	Setting string `json:"setting,omitempty"`
	// Objectives are the search's objectives as written ("p99<=100ms").
	Objectives []string `json:"objectives"`
	// StepSeconds is the length of a search's step, ConfirmSeconds of its
	// confirmation run (0: none).
	StepSeconds    float64 `json:"step_seconds"`
	ConfirmSeconds float64 `json:"confirm_seconds"`
	// MemoryBudgetBytes is the memory budget given (0: none); MemoryMargin
	// the share of it kept free (MemoryMargin).
	MemoryBudgetBytes int64   `json:"memory_budget_bytes,omitempty"`
	MemoryMargin      float64 `json:"memory_margin,omitempty"`
	// Cores is the number of CPUs of the machine that ran the study.
	Cores int `json:"cores"`
	// Points are the measured configurations (and client-side levels), in
	// the order of the sized factor's levels.
	Points []SizingPoint `json:"points"`
}

// SizingPoint is one pool size (one series): the capacity over its
// searches, and its memory and CPU at the answer.
type SizingPoint struct {
	// Label is the series'; Series and Config index Result.Series and
	// Result.Configurations.
	Label  string `json:"label"`
	Series int    `json:"series"`
	Config int    `json:"config"`
	// Level is the sized factor's level; Others the levels of every other
	// factor ("transport=unix"), "" when there are none.
	Level  string `json:"level"`
	Others string `json:"others,omitempty"`
	// Searches are the capacity searches, one per round.
	Searches []SizingSearch `json:"searches"`
	// Capacity is the median capacity of the counted searches (Counts:
	// confirmed, or resolved where no confirmation was asked), the lower
	// of the two middle ones for an even count, so that it is a figure a
	// search measured; its interval (CI95, kept under that name) is a pair
	// of the searches' own capacities, whose confidence is Confidence: the
	// range of 2 searches is a 50% interval, of 3 a 75% one, and 95% is
	// reached from 6 searches on. Min and Max are the counted searches'
	// range, in req/s. Counted is how many searches count, Unconfirmed how
	// many found a rate but could not confirm it (left out of the figures).
	Capacity    Figure  `json:"capacity"`
	Confidence  float64 `json:"capacity_confidence,omitempty"`
	Min         float64 `json:"min"`
	Max         float64 `json:"max"`
	Counted     int     `json:"counted_searches"`
	Unconfirmed int     `json:"unconfirmed_searches,omitempty"`
	// LimitedBy is what most of the counted searches were limited by
	// (LimitBackend, LimitClient or LimitCores); Reason the first such
	// search's reason, ClientKind its kind when it is the client's.
	LimitedBy  string `json:"limited_by"`
	Reason     string `json:"reason,omitempty"`
	ClientKind string `json:"client_kind,omitempty"`
	// PoolPSSBytes is the median over the searches of the pool's mean PSS
	// at the answer; PeakPSSBytes the highest reading.
	PoolPSSBytes float64 `json:"pool_pss_bytes"`
	PeakPSSBytes int64   `json:"peak_pss_bytes"`
	// WorkerPSS is the PSS of one worker under load at the answer, in
	// bytes, over every worker and sample of every search.
	WorkerPSS Spread `json:"worker_pss_bytes"`
	// Workers is the most worker processes seen at the answer (the
	// master not counted); Processes the most processes of the backend's
	// tree, the master included (0 in files written before it was kept).
	Workers   int `json:"workers"`
	Processes int `json:"processes,omitempty"`
	// CPUPerRequestMs is the backend's CPU time per request at the answer,
	// in ms; BackendCores and ClientCores their CPU use, in cores (1: one
	// CPU busy all the time); medians over the searches.
	CPUPerRequestMs float64 `json:"cpu_per_request_ms"`
	BackendCores    float64 `json:"backend_cores"`
	ClientCores     float64 `json:"client_cores"`
	// MachineCores is how many of the machine's CPUs were busy at the
	// answer, by anything (median over the searches).
	MachineCores float64 `json:"machine_cores"`
}

// SizingSearch is one capacity search of one pool size.
type SizingSearch struct {
	// Round is the round (1-based) that ran it.
	Round int `json:"round"`
	// Capacity is the highest rate that passed (and was confirmed), in
	// req/s; 0 when none did. Confirmed says a confirmation run passed.
	Capacity  float64 `json:"capacity"`
	Confirmed bool    `json:"confirmed"`
	// LimitedBy is LimitBackend, LimitClient or LimitCores (NameLimit);
	// Reason why the client or the cores limited it, or why the search
	// ended without a failing rate. ClientKind, when the client reported
	// holding the search back, is ClientCeiling, ClientCPU or ClientLate.
	LimitedBy  string `json:"limited_by"`
	Reason     string `json:"reason,omitempty"`
	ClientKind string `json:"client_kind,omitempty"`
	// Steps are the search's steps in the order run.
	Steps []SizingStep `json:"steps"`
	// Answer holds the pool's figures at the step the answer rests on.
	Answer SizingLoad `json:"answer"`
}

// SizingStep is one step of a search: the rate asked and what came of it.
type SizingStep struct {
	// Rate is the rate asked, Achieved the rate sent, in req/s.
	Rate     float64 `json:"rate"`
	Achieved float64 `json:"achieved"`
	// Seconds is the step's counted length.
	Seconds float64 `json:"seconds"`
	// P50Ms, P99Ms and MaxMs are its latencies, in ms; ErrorRate its
	// failed share, 0 to 1.
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
	ErrorRate float64 `json:"error_rate"`
	// Pass says its objectives held and so did the load; Confirm marks a
	// confirmation run.
	Pass    bool `json:"pass"`
	Confirm bool `json:"confirm,omitempty"`
	// Held is why the load did not hold, when it did not; ClientLimit why
	// the client may have set the result.
	Held        string `json:"held,omitempty"`
	ClientLimit string `json:"client_limit,omitempty"`
	// Load is the pool's figures during the step.
	Load SizingLoad `json:"load"`
}

// SizingLoad is the pool's memory and CPU during a step.
type SizingLoad struct {
	// PoolPSSBytes is the mean of the tree's summed PSS over the samples,
	// PeakPSSBytes the highest.
	PoolPSSBytes float64 `json:"pool_pss_bytes"`
	PeakPSSBytes int64   `json:"peak_pss_bytes"`
	// WorkerPSS is one worker's PSS over the workers and samples, in
	// bytes; WorkerSamples how many readings it rests on; Workers the most
	// worker processes seen (every process of the tree but its leader, a
	// prefork pool's master; the leader when it is alone); Processes the
	// most processes of the tree, its leader included.
	WorkerPSS     Spread `json:"worker_pss_bytes"`
	WorkerSamples int    `json:"worker_samples"`
	Workers       int    `json:"workers"`
	Processes     int    `json:"processes,omitempty"`
	// CPUPerRequestMs is the backend's CPU per request, in ms;
	// BackendCores and ClientCores their CPU use, in cores.
	CPUPerRequestMs float64 `json:"cpu_per_request_ms"`
	BackendCores    float64 `json:"backend_cores"`
	ClientCores     float64 `json:"client_cores"`
	// MachineCores is how many of the machine's CPUs were busy, on
	// average, by anything (the backend, the client, other programs).
	MachineCores float64 `json:"machine_cores"`
	// Complete counts the step's completed requests.
	Complete int64 `json:"complete"`
}

// Spread is a distribution's median, 95th percentile and maximum.
type Spread struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	Max float64 `json:"max"`
}

// SpreadOf returns the spread of xs (the zero Spread for none).
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(q float64) float64 { return s[min(len(s)-1, int(math.Ceil(q*float64(len(s))))-1)] }
	return Spread{P50: at(0.5), P95: at(0.95), Max: s[len(s)-1]}
}

// Thresholds of the sizing answer.
const (
	// KneeTolerance is how far below the best capacity (medians of the
	// searches) a pool may serve and still count as within noise of it:
	// 10% (or less, when the two intervals overlap).
	KneeTolerance = 0.10
	// MemoryMargin is the share of a memory budget kept free when pools
	// are fitted in it: 20%.
	MemoryMargin = 0.20
	// CoresShare is the share of the machine's cores that must be busy
	// (by anything, or by the backend and the client together) at a pool
	// at or above the knee for the answer to name the cores as the limit:
	// 75%.
	CoresShare = 0.75
	// OthersShare is the most cores other programs may keep busy before
	// the answer says the machine was shared: half a core.
	OthersShare = 0.5
)

// What limited a search or a pool size (SizingSearch.LimitedBy).
const (
	// LimitBackend: the backend's own limit (its workers, its queue).
	LimitBackend = "backend"
	// LimitClient: the client held requests back while the backend
	// answered within the objectives (its CPU, its in-flight ceiling).
	LimitClient = "client"
	// LimitCores: the backend and the client together kept CoresShare or
	// more of the cores other programs left busy: the machine's limit.
	LimitCores = "cores"
)

// Kinds of the client's hold on a search (SizingSearch.ClientKind).
const (
	// ClientCeiling: the in-flight ceiling (-c) held requests back.
	ClientCeiling = "ceiling"
	// ClientCPU: the client's CPU was saturated.
	ClientCPU = "cpu"
	// ClientLate: the client sent late or less than asked (its timer and
	// CPU lag), which a machine whose cores are busy explains.
	ClientLate = "late"
)

// NameLimit names what limited the search se from evidence, on a machine
// of cores CPUs: the client when the client's own limit (ClientCeiling,
// ClientCPU: the search already ruled out a ceiling full of requests the
// backend had not answered) held it back; else the machine's cores when,
// at the steps at and above the answer, the backend and the client kept
// busy CoresShare of the cores that other programs left (at least one);
// else the client when it reported sending late on an idle machine; the
// backend otherwise.
func NameLimit(se *SizingSearch, ncores int) {
	var busy, others float64
	for _, st := range se.Steps {
		if st.Rate < se.Capacity || st.Load.Complete == 0 {
			continue
		}
		l := st.Load
		if b := l.BackendCores + l.ClientCores; b > busy {
			busy, others = b, max(0, l.MachineCores-b)
		}
	}
	avail := max(float64(ncores)-others, 1)
	client := se.LimitedBy == LimitClient
	switch {
	case client && (se.ClientKind == ClientCeiling || se.ClientKind == ClientCPU):
	case ncores > 0 && se.Capacity > 0 && busy >= CoresShare*avail:
		se.LimitedBy = LimitCores
		se.Reason = fmt.Sprintf("the backend and the client kept %s busy of the %d", cores(busy), ncores)
		if others >= OthersShare {
			se.Reason += fmt.Sprintf(" (other programs %s)", cores(others))
		}
	case client:
	default:
		se.LimitedBy = LimitBackend
	}
}

// Counts reports that se's capacity counts in its pool size's figures: it
// found a rate, and confirmed it where the study asked for confirmation.
func (s *Sizing) Counts(se *SizingSearch) bool {
	return se.Capacity > 0 && (se.Confirmed || s.ConfirmSeconds == 0)
}

// measuredFigure is the median of caps (the lower of the two middle ones
// for an even count) and an interval of two of them, [x(k), x(n-k+1)] for
// the largest k whose confidence is at least trials.Confidence, else the
// range, with its confidence: every figure one of the searches measured.
func measuredFigure(caps []float64) (Figure, float64) {
	c := slices.Clone(caps)
	slices.Sort(c)
	n := len(c)
	if n == 0 {
		return Figure{}, 0
	}
	f := Figure{Median: c[(n-1)/2]}
	if n < 2 {
		return f, 0
	}
	k := 1
	for k+1 < n-k+1 && orderCover(k+1, n) >= trials.Confidence {
		k++
	}
	f.CI95 = []float64{c[k-1], c[n-k]}
	return f, orderCover(k, n)
}

// orderCover is the confidence that [x(k), x(n-k+1)] of n draws holds the
// median: 1 - 2 P(Binomial(n, 1/2) <= k-1).
func orderCover(k, n int) float64 {
	var cdf, c float64 = 0, 1
	for i := 0; i <= k-1; i++ {
		if i > 0 {
			c = c * float64(n-i+1) / float64(i)
		}
		cdf += c
	}
	return 1 - 2*cdf/math.Pow(2, float64(n))
}

// Summarize fills each point's figures from its searches: the capacity
// from the counted ones only (Counts), the limit by most of them.
func (s *Sizing) Summarize() {
	for i := range s.Points {
		p := &s.Points[i]
		var caps, pss, cpu, bc, cc, mc []float64
		var worker []float64
		votes := map[string]int{}
		p.LimitedBy, p.Reason, p.ClientKind = LimitBackend, "", ""
		p.Min, p.Max, p.Counted, p.Unconfirmed = 0, 0, 0, 0
		p.Capacity, p.Confidence = Figure{}, 0
		for _, se := range p.Searches {
			if !s.Counts(&se) {
				if se.Capacity > 0 {
					p.Unconfirmed++
				}
				continue
			}
			if p.Counted == 0 || se.Capacity < p.Min {
				p.Min = se.Capacity
			}
			p.Counted++
			caps = append(caps, se.Capacity)
			p.Max = max(p.Max, se.Capacity)
			lim := se.LimitedBy
			if lim == "" {
				lim = LimitBackend
			}
			votes[lim]++
			a := se.Answer
			if a.Complete == 0 {
				continue
			}
			pss, cpu = append(pss, a.PoolPSSBytes), append(cpu, a.CPUPerRequestMs)
			bc, cc, mc = append(bc, a.BackendCores), append(cc, a.ClientCores), append(mc, a.MachineCores)
			p.PeakPSSBytes = max(p.PeakPSSBytes, a.PeakPSSBytes)
			p.Workers, p.Processes = max(p.Workers, a.Workers), max(p.Processes, a.Processes)
			worker = append(worker, a.WorkerPSS.P50)
			p.WorkerPSS.P95 = max(p.WorkerPSS.P95, a.WorkerPSS.P95)
			p.WorkerPSS.Max = max(p.WorkerPSS.Max, a.WorkerPSS.Max)
		}
		p.Capacity, p.Confidence = measuredFigure(caps)
		// The limit most of the counted searches had (the backend's on a
		// tie with it, else the cores' before the client's).
		for _, l := range []string{LimitBackend, LimitCores, LimitClient} {
			if votes[l] > votes[p.LimitedBy] {
				p.LimitedBy = l
			}
		}
		for _, se := range p.Searches {
			if s.Counts(&se) && se.LimitedBy == p.LimitedBy && p.LimitedBy != LimitBackend {
				p.Reason, p.ClientKind = se.Reason, se.ClientKind
				break
			}
		}
		p.PoolPSSBytes, p.CPUPerRequestMs = median(pss), median(cpu)
		p.BackendCores, p.ClientCores, p.MachineCores = median(bc), median(cc), median(mc)
		p.WorkerPSS.P50 = median(worker)
	}
}

// median is the median of xs, 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return trials.Median(xs).Median
}

// within reports whether p's capacity is within noise of best's: its
// median within KneeTolerance of best's, or their intervals overlapping
// (pool sizes whose intervals overlap are not ranked), or, where both
// saturated the cores and the pool sizes' own searches give a spread (n),
// their difference within it (not apart). Only confirmed searches make
// the intervals and the spread, so a search cut short by a stall of the
// machine does not widen them.
func (s *Sizing) within(p, best *SizingPoint, n noise) bool {
	if p.Capacity.Median >= best.Capacity.Median*(1-KneeTolerance) {
		return true
	}
	a, b := p.Capacity.CI95, best.Capacity.CI95
	if len(a) == 2 && len(b) == 2 && a[1] >= b[0] && b[1] >= a[0] {
		return true
	}
	return n.df > 0 && s.saturated(p) && s.saturated(best) && !s.apart(p, best, n)
}

// saturated reports whether the cores were the limit at p: its searches
// were limited by them (NameLimit), or the backend and the client kept
// CoresShare or more of the cores that other programs left (at least one)
// busy. Pool sizes that saturate the cores are expected to serve alike,
// so only they are left unranked by the spread alone.
func (s *Sizing) saturated(p *SizingPoint) bool {
	if s.Cores <= 0 || p.Capacity.Median <= 0 {
		return false
	}
	others := max(0, p.MachineCores-p.BackendCores-p.ClientCores)
	return p.LimitedBy == LimitCores || p.BackendCores+p.ClientCores >= CoresShare*max(float64(s.Cores)-others, 1)
}

// noise is the spread of one search's capacity, on a log scale, among the
// pool sizes of one answer: the standard deviation of each counted
// search's log capacity about its pool size's mean, pooled over the pool
// sizes with two counted searches or more, on df degrees of freedom (0:
// none had two). On a shared machine the searches of every pool size meet
// the same stalls, so their spreads pool.
type noise struct {
	sd float64
	df int
}

// logCaps are the logs of p's counted searches' capacities.
func (s *Sizing) logCaps(p *SizingPoint) []float64 {
	var xs []float64
	for _, se := range p.Searches {
		if s.Counts(&se) {
			xs = append(xs, math.Log(se.Capacity))
		}
	}
	return xs
}

// noiseOf is the pooled spread of ps (noise).
func (s *Sizing) noiseOf(ps []*SizingPoint) noise {
	var ss float64
	var df int
	for _, p := range ps {
		xs := s.logCaps(p)
		if len(xs) < 2 {
			continue
		}
		m := mean(xs)
		for _, x := range xs {
			ss += (x - m) * (x - m)
		}
		df += len(xs) - 1
	}
	if df == 0 {
		return noise{}
	}
	return noise{sd: math.Sqrt(ss / float64(df)), df: df}
}

// apart reports whether a's and b's capacities differ beyond the noise n:
// their mean log capacities differ by more than the 97.5% quantile of
// Student's t on n.df degrees of freedom times the difference's standard
// error (a two-sided pooled two-sample t test at 95%). TestKneeNoise
// measures how often it ranks pool sizes of one truth, and how often it
// finds a real step.
func (s *Sizing) apart(a, b *SizingPoint, n noise) bool {
	x, y := s.logCaps(a), s.logCaps(b)
	if len(x) == 0 || len(y) == 0 || n.df == 0 {
		return true
	}
	se := n.sd * math.Sqrt(1/float64(len(x))+1/float64(len(y)))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n.df)}.Quantile(0.975)
	return math.Abs(mean(x)-mean(y)) > t*se
}

// mean is the mean of xs (not empty).
func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// Answers returns the sizing answers, one per combination of the other
// factors' levels: the knee (the smallest pool within noise of the best),
// what limits it, what to set, and with a memory budget the largest pool
// that fits.
func (s *Sizing) Answers() []Answer {
	var groups []string
	for _, p := range s.Points {
		if !slices.Contains(groups, p.Others) {
			groups = append(groups, p.Others)
		}
	}
	var out []Answer
	for _, g := range groups {
		var ps []*SizingPoint
		for i := range s.Points {
			if s.Points[i].Others == g {
				ps = append(ps, &s.Points[i])
			}
		}
		out = append(out, s.answer(g, ps))
	}
	return out
}

// set is "pm.max_children = 8" or "workers = 8".
func (s *Sizing) set(level string) string {
	name := s.Factor
	if s.Setting != "" {
		name = s.Setting
	}
	return name + " = " + level
}

// answer is the answer of one group of points, in the factor's order.
func (s *Sizing) answer(group string, ps []*SizingPoint) Answer {
	a := Answer{Factor: s.Factor}
	slo := strings.Join(s.Objectives, ", ")
	at := ""
	if group != "" {
		at = " at " + group
	}
	for _, p := range ps {
		a.Details = append(a.Details, s.detail(p, slo))
	}
	var best *SizingPoint
	for _, p := range ps {
		if p.Capacity.Median > 0 && (best == nil || p.Capacity.Median > best.Capacity.Median) {
			best = p
		}
	}
	if best == nil {
		a.Conclusion = fmt.Sprintf("%s: no pool size%s served any rate within %s, so there is no sizing answer.", s.Factor, at, slo)
		if u := unconfirmed(ps); u != "" {
			a.Conclusion = fmt.Sprintf("%s: no pool size%s served a confirmed rate within %s, so there is no sizing answer. %s", s.Factor, at, slo, u)
		}
		return a
	}
	n := s.noiseOf(ps)
	knee, ki := s.kneeOf(ps, best, n)
	rec, fits := s.recommend(ps, knee)
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s: %s within %s", s.set(rec.Level), at, rec.RateText(), slo)
	if rec.WorkerPSS.P95 > 0 {
		fmt.Fprintf(&b, ", %s per worker at p95 under load", Bytes(int64(rec.WorkerPSS.P95)))
	}
	b.WriteString(". ")
	a.KneeLimit = s.limit(ps, ki, rec)
	switch a.KneeLimit {
	case LimitCores:
		fmt.Fprintf(&b, "The knee is the machine's %d cores: at %s, %s were busy (the backend %s, the client %s",
			s.Cores, knee.Level, cores(knee.busy()), cores(knee.BackendCores), cores(knee.ClientCores))
		if other := knee.MachineCores - knee.BackendCores - knee.ClientCores; other > 0.25 {
			fmt.Fprintf(&b, ", other programs %s", cores(other))
		}
		b.WriteString(")")
		for _, p := range ps[ki+1:] {
			if p.Capacity.Median > 0 {
				fmt.Fprintf(&b, "; at %s, %s", p.Level, cores(p.busy()))
			}
		}
		b.WriteString("; so more children add no capacity on this machine: the capacity is the machine's, not the pool's.")
	case LimitClient:
		fmt.Fprintf(&b, "The knee is the client's limit, not the backend's (%s): the backend serves at least this much.", rec.Reason)
		switch rec.ClientKind {
		case ClientCeiling:
			b.WriteString(" Raise -c (the most requests in flight, the file's concurrency) to measure the backend's own limit.")
		case ClientCPU:
			b.WriteString(" Give the client more CPU (or its own machine) to measure the backend's own limit.")
		}
	case KneeNotReached:
		fmt.Fprintf(&b, "Capacity still grows at the largest pool measured: the knee is at %s or beyond, where the backend's own limit was met; measure larger pools.", knee.Level)
	default:
		fmt.Fprintf(&b, "The knee is the backend's own limit: beyond %s, more workers do not serve more.", knee.Level)
	}
	if other := s.others(ps); other >= OthersShare {
		fmt.Fprintf(&b, " Other programs kept %s of the machine's %d busy during the searches: the capacities are what this pool got of a shared machine.", cores(other), s.Cores)
	}
	for _, p := range ps[ki+1:] {
		if p.Capacity.Median <= 0 {
			continue
		}
		word := "within noise of the knee"
		switch {
		case !s.within(p, knee, n):
			word = "less than the knee, beyond noise"
		case !s.within(knee, p, n):
			word = "more than the knee, beyond noise"
		}
		fmt.Fprintf(&b, " %s = %s serves %s, %s", s.Factor, p.Level, p.RateText(), word)
		if rec.PoolPSSBytes > 0 && p.PoolPSSBytes > 0 {
			fmt.Fprintf(&b, " for %.1f× the memory", p.PoolPSSBytes/rec.PoolPSSBytes)
		}
		b.WriteString(".")
	}
	if knee.Capacity.Median < best.Capacity.Median*(1-KneeTolerance) {
		// Within noise of the best by the searches' spread alone, though
		// their medians are further apart than KneeTolerance: not ranked,
		// which more searches may change.
		fmt.Fprintf(&b, " The searches' spread leaves %s = %s within noise of the best, %s = %s (%s against %s req/s), their medians more than %.0f%% apart: more searches a pool size (--repeat) would rank them.",
			s.Factor, knee.Level, s.Factor, best.Level, Rate(knee.Capacity.Median), Rate(best.Capacity.Median), 100*KneeTolerance)
	}
	if fits != "" {
		b.WriteString(" " + fits)
	}
	if u := unconfirmed(ps); u != "" {
		b.WriteString(" " + u)
	}
	a.Level, a.Knee = rec.Level, knee.Level
	a.Conclusion = b.String()
	return a
}

// kneeOf is the knee of ps (in the factor's order) and its index: the
// smallest pool whose capacity is within noise of best's.
func (s *Sizing) kneeOf(ps []*SizingPoint, best *SizingPoint, n noise) (*SizingPoint, int) {
	for i, p := range ps {
		if p.Capacity.Median > 0 && s.within(p, best, n) {
			return p, i
		}
	}
	return best, slices.Index(ps, best)
}

// recommend is the pool to set among ps, given their knee: the knee, or
// with a memory budget the knee does not fit, the largest pool measured
// that fits; and with a budget, the sentence on what it fits ("" without).
func (s *Sizing) recommend(ps []*SizingPoint, knee *SizingPoint) (*SizingPoint, string) {
	rec := knee
	var fits string
	if s.MemoryBudgetBytes > 0 {
		var perWorker float64
		var heaviest *SizingPoint
		for _, p := range ps {
			if p.WorkerPSS.P95 > perWorker {
				perWorker, heaviest = p.WorkerPSS.P95, p
			}
		}
		if perWorker > 0 {
			room := float64(s.MemoryBudgetBytes) * (1 - s.MemoryMargin)
			n := int(room / perWorker)
			var largest *SizingPoint
			for _, p := range ps {
				if v, err := strconv.ParseFloat(p.Level, 64); err == nil && v*perWorker <= room && p.Capacity.Median > 0 {
					largest = p
				}
			}
			var tail string
			if largest != nil {
				tail = fmt.Sprintf("; of the pools measured, the largest that fits is %s = %s", s.Factor, largest.Level)
				if v, _ := strconv.ParseFloat(knee.Level, 64); v*perWorker > room {
					rec = largest
					tail += " (the knee does not fit: set that)"
				}
			} else {
				tail = "; none of the pools measured fits"
			}
			// The same percentile as the answer's per worker, at the pool
			// where one worker weighed the most (named when it is not
			// the one set, whose figure the answer gives).
			each := Bytes(int64(perWorker)) + " each at p95 under load"
			if heaviest.WorkerPSS.P95 != rec.WorkerPSS.P95 {
				each += fmt.Sprintf(" (the most of the pools measured, at %s = %s)", s.Factor, heaviest.Level)
			}
			fits = fmt.Sprintf("A %s budget would fit %d workers at %s, with a %.0f%% margin%s.", Bytes(s.MemoryBudgetBytes), n, each, 100*s.MemoryMargin, tail)
		}
	}
	return rec, fits
}

// KneeNotReached is a sizing Answer's KneeLimit when capacity still grew
// at the largest pool measured, neither the machine's cores nor the client
// limiting it: the knee is at Answer.Knee or beyond.
const KneeNotReached = "not_reached"

// limit is what limits the knee ps[ki], rec being the pool to set: a
// Limit constant, or KneeNotReached.
func (s *Sizing) limit(ps []*SizingPoint, ki int, rec *SizingPoint) string {
	knee := ps[ki]
	ceiling := rec.LimitedBy == LimitClient && rec.ClientKind == ClientCeiling
	switch {
	case !ceiling && (knee.LimitedBy == LimitCores || ki < len(ps)-1 && s.coresLimit(ps[ki:])):
		// Before the client's lateness: a client that could not send what
		// it was asked on a saturated machine is held back by the same
		// cores. Not before its ceiling: that is -c's, whatever the cores.
		return LimitCores
	case rec.LimitedBy == LimitClient:
		return LimitClient
	case ki == len(ps)-1:
		return KneeNotReached
	}
	return LimitBackend
}

// unconfirmed says which pool sizes had searches that found a rate they
// could not confirm (left out of the figures), "" when none had.
func unconfirmed(ps []*SizingPoint) string {
	var parts []string
	for _, p := range ps {
		if p.Unconfirmed > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d at %s", p.Unconfirmed, len(p.Searches), p.Level))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Searches not confirmed, left out of the figures: " + strings.Join(parts, ", ") + " (their confirmation runs failed, or the search ended before one)."
}

// others is the most cores that programs other than the backend and the
// client kept busy at one of ps, at the answer.
func (s *Sizing) others(ps []*SizingPoint) float64 {
	var m float64
	for _, p := range ps {
		if p.Capacity.Median > 0 {
			m = max(m, p.MachineCores-p.BackendCores-p.ClientCores)
		}
	}
	return m
}

// coresLimit reports whether the cores were the limit at a pool of ps
// (saturated).
func (s *Sizing) coresLimit(ps []*SizingPoint) bool {
	return slices.ContainsFunc(ps, s.saturated)
}

// busy is the cores busy at p: the machine's, or the backend's and the
// client's together where that is more (medians over its searches).
func (p *SizingPoint) busy() float64 {
	return max(p.BackendCores+p.ClientCores, p.MachineCores)
}

// detail is one pool size's line.
func (s *Sizing) detail(p *SizingPoint, slo string) string {
	head := s.Factor + "=" + p.Level
	if p.Others != "" {
		head += " at " + p.Others
	}
	if p.Capacity.Median <= 0 {
		line := fmt.Sprintf("%s: no confirmed rate within %s (%d searches", head, slo, len(p.Searches))
		if p.Unconfirmed > 0 {
			line += fmt.Sprintf("; %d found a rate they could not confirm", p.Unconfirmed)
		}
		return line + ")"
	}
	line := fmt.Sprintf("%s: %s within %s (range %s to %s over %d confirmed searches", head, p.RateText(), slo,
		Rate(p.Min), Rate(p.Max), p.Counted)
	if p.Unconfirmed > 0 {
		line += fmt.Sprintf("; %d more not confirmed, left out", p.Unconfirmed)
	}
	switch p.LimitedBy {
	case LimitClient:
		line += "; the client's limit"
	case LimitCores:
		line += "; the machine's cores"
	}
	line += ")"
	if p.PoolPSSBytes > 0 {
		line += fmt.Sprintf("; pool PSS %s, per worker p50 %s, p95 %s, max %s (%s)", Bytes(int64(p.PoolPSSBytes)),
			Bytes(int64(p.WorkerPSS.P50)), Bytes(int64(p.WorkerPSS.P95)), Bytes(int64(p.WorkerPSS.Max)), p.WorkersText())
	}
	line += fmt.Sprintf("; CPU %.2f ms a request, backend %s, client %s, machine %s busy of %d", p.CPUPerRequestMs, cores(p.BackendCores), cores(p.ClientCores), cores(p.MachineCores), s.Cores)
	return line
}

// WorkersText counts p's processes as every page and text does: "4
// workers, 5 processes with the master", or "1 worker" for a backend of
// one process (or a file written before the processes were kept).
func (p *SizingPoint) WorkersText() string {
	w := fmt.Sprintf("%d workers", p.Workers)
	if p.Workers == 1 {
		w = "1 worker"
	}
	if p.Processes > p.Workers {
		w += fmt.Sprintf(", %d processes with the master", p.Processes)
	}
	return w
}

// RateText is a pool size's capacity with its interval and what that
// interval is: "392 [385, 398] req/s (range of 2 searches)", "392 [385,
// 398] req/s (97% interval)", or "392 req/s (one search)".
func (p *SizingPoint) RateText() string {
	f := p.Capacity
	s := Rate(f.Median)
	note := ""
	if len(f.CI95) == 2 {
		s += " [" + Rate(f.CI95[0]) + ", " + Rate(f.CI95[1]) + "]"
		note = fmt.Sprintf(" (%.0f%% interval)", math.Floor(100*p.Confidence))
		if f.CI95[0] == p.Min && f.CI95[1] == p.Max {
			note = fmt.Sprintf(" (range of %d searches)", p.Counted)
		}
	} else if p.Counted == 1 {
		note = " (one search)"
	}
	return s + " req/s" + note
}

// Rate is a rate as the sizing's sentences and table write it: whole
// from 100 on ("392"), with one decimal below ("12.5").
func Rate(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// cores is "1.85 cores".
func cores(v float64) string { return fmt.Sprintf("%.2f cores", v) }

// Bytes is a size in binary units: "38.2 MiB".
func Bytes(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(b), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// SortPoints orders the points by the sized factor's levels (levels, in
// the file's order), then by the other levels.
func (s *Sizing) SortPoints(levels []string) {
	sort.SliceStable(s.Points, func(i, j int) bool {
		a, b := &s.Points[i], &s.Points[j]
		if a.Others != b.Others {
			return a.Others < b.Others
		}
		return slices.Index(levels, a.Level) < slices.Index(levels, b.Level)
	})
}
