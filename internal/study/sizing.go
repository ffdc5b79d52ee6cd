package study

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

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
	// Capacity is the median capacity of the searches with its interval
	// (from two searches; of the confidence trials.MedianConfidence
	// gives for their count); Min and Max their range, in req/s.
	Capacity Figure  `json:"capacity"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	// LimitedBy is "client" when most of the searches said the client
	// limited them, else "backend"; Reason the first such search's reason.
	LimitedBy string `json:"limited_by"`
	Reason    string `json:"reason,omitempty"`
	// PoolPSSBytes is the median over the searches of the pool's mean PSS
	// at the answer; PeakPSSBytes the highest reading.
	PoolPSSBytes float64 `json:"pool_pss_bytes"`
	PeakPSSBytes int64   `json:"peak_pss_bytes"`
	// WorkerPSS is the PSS of one worker under load at the answer, in
	// bytes, over every worker and sample of every search.
	WorkerPSS Spread `json:"worker_pss_bytes"`
	// Workers is the most worker processes seen at the answer.
	Workers int `json:"workers"`
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
	// LimitedBy is "backend" or "client"; Reason why the client limited it
	// or why the search ended without a failing rate.
	LimitedBy string `json:"limited_by"`
	Reason    string `json:"reason,omitempty"`
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
	// worker processes seen.
	WorkerPSS     Spread `json:"worker_pss_bytes"`
	WorkerSamples int    `json:"worker_samples"`
	Workers       int    `json:"workers"`
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
	// 10%.
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

// Summarize fills each point's figures from its searches.
func (s *Sizing) Summarize() {
	for i := range s.Points {
		p := &s.Points[i]
		var caps, pss, cpu, bc, cc, mc []float64
		var worker []float64
		clients := 0
		p.LimitedBy, p.Reason = "backend", ""
		p.Min, p.Max = 0, 0
		for k, se := range p.Searches {
			caps = append(caps, se.Capacity)
			if k == 0 || se.Capacity < p.Min {
				p.Min = se.Capacity
			}
			p.Max = max(p.Max, se.Capacity)
			if se.LimitedBy == "client" {
				clients++
				if p.Reason == "" {
					p.Reason = se.Reason
				}
			}
			a := se.Answer
			if a.Complete == 0 {
				continue
			}
			pss, cpu = append(pss, a.PoolPSSBytes), append(cpu, a.CPUPerRequestMs)
			bc, cc, mc = append(bc, a.BackendCores), append(cc, a.ClientCores), append(mc, a.MachineCores)
			p.PeakPSSBytes = max(p.PeakPSSBytes, a.PeakPSSBytes)
			p.Workers = max(p.Workers, a.Workers)
			worker = append(worker, a.WorkerPSS.P50)
			p.WorkerPSS.P95 = max(p.WorkerPSS.P95, a.WorkerPSS.P95)
			p.WorkerPSS.Max = max(p.WorkerPSS.Max, a.WorkerPSS.Max)
		}
		if len(caps) > 0 {
			p.Capacity = FigureOf(trials.Median(caps))
		}
		// The client's limit when it held back most of the searches.
		if 2*clients > len(p.Searches) {
			p.LimitedBy = "client"
		} else {
			p.Reason = ""
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
// median within KneeTolerance of best's. The medians, not the intervals:
// one search cut short by a stall of the machine widens an interval of
// three searches to its own low figure, and would make every pool "within
// noise" of every other.
func within(p, best *SizingPoint) bool {
	return p.Capacity.Median >= best.Capacity.Median*(1-KneeTolerance)
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
		return a
	}
	var knee *SizingPoint
	ki := 0
	for i, p := range ps {
		if p.Capacity.Median > 0 && within(p, best) {
			knee, ki = p, i
			break
		}
	}
	rec := knee
	var fits string
	if s.MemoryBudgetBytes > 0 {
		var perWorker float64
		for _, p := range ps {
			perWorker = max(perWorker, p.WorkerPSS.P95)
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
			fits = fmt.Sprintf("A %s budget would fit %d workers at %s each at p95 under load, with a %.0f%% margin", Bytes(s.MemoryBudgetBytes), n, Bytes(int64(perWorker)), 100*s.MemoryMargin)
			if largest != nil {
				fits += fmt.Sprintf("; of the pools measured, the largest that fits is %s = %s", s.Factor, largest.Level)
				if v, _ := strconv.ParseFloat(knee.Level, 64); v*perWorker > room {
					rec = largest
					fits += " (the knee does not fit: set that)"
				}
			} else {
				fits += "; none of the pools measured fits"
			}
			fits += "."
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s: %s req/s within %s", s.set(rec.Level), at, rate(rec.Capacity), slo)
	if rec.WorkerPSS.P95 > 0 {
		fmt.Fprintf(&b, ", %s per worker at p95 under load", Bytes(int64(rec.WorkerPSS.P95)))
	}
	b.WriteString(". ")
	switch {
	case ki < len(ps)-1 && s.coresLimit(ps[ki:]):
		// Before the client's limit: a client that could not send what
		// it was asked on a saturated machine is held back by the same
		// cores.
		busy := s.busiest(ps[ki:])
		fmt.Fprintf(&b, "The knee is the machine's %d cores: from %s on, %s were busy (at %s, the backend %s, the client %s",
			s.Cores, knee.Level, cores(busy), knee.Level, cores(knee.BackendCores), cores(knee.ClientCores))
		if other := knee.MachineCores - knee.BackendCores - knee.ClientCores; other > 0.25 {
			fmt.Fprintf(&b, ", other programs %s", cores(other))
		}
		b.WriteString("), so more workers do not serve more.")
	case rec.LimitedBy == "client":
		fmt.Fprintf(&b, "The knee is the client's limit, not the backend's (%s): the backend serves at least this much.", rec.Reason)
	case ki == len(ps)-1:
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
		case !within(p, knee):
			word = "less than the knee, beyond noise"
		case !within(knee, p):
			word = "more than the knee, beyond noise"
		}
		fmt.Fprintf(&b, " %s = %s serves %s req/s (%s)", s.Factor, p.Level, rate(p.Capacity), word)
		if rec.PoolPSSBytes > 0 && p.PoolPSSBytes > 0 {
			fmt.Fprintf(&b, " for %.1f× the memory", p.PoolPSSBytes/rec.PoolPSSBytes)
		}
		b.WriteString(".")
	}
	if fits != "" {
		b.WriteString(" " + fits)
	}
	a.Level, a.Knee = rec.Level, knee.Level
	a.Conclusion = b.String()
	return a
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

// coresLimit reports whether, at a pool of ps, CoresShare of the
// machine's cores or more were busy.
func (s *Sizing) coresLimit(ps []*SizingPoint) bool {
	return s.Cores > 0 && s.busiest(ps) >= CoresShare*float64(s.Cores)
}

// busiest is the most cores busy at one of ps: the machine's, or the
// backend's and the client's together where that is more.
func (s *Sizing) busiest(ps []*SizingPoint) float64 {
	var m float64
	for _, p := range ps {
		m = max(m, p.BackendCores+p.ClientCores, p.MachineCores)
	}
	return m
}

// detail is one pool size's line.
func (s *Sizing) detail(p *SizingPoint, slo string) string {
	head := s.Factor + "=" + p.Level
	if p.Others != "" {
		head += " at " + p.Others
	}
	if p.Capacity.Median <= 0 {
		return fmt.Sprintf("%s: no rate within %s (%d searches)", head, slo, len(p.Searches))
	}
	line := fmt.Sprintf("%s: %s req/s within %s (range %s to %s over %d searches", head, rate(p.Capacity), slo,
		num(p.Min), num(p.Max), len(p.Searches))
	if p.LimitedBy == "client" {
		line += "; the client's limit"
	}
	line += ")"
	if p.PoolPSSBytes > 0 {
		line += fmt.Sprintf("; pool PSS %s, per worker p50 %s, p95 %s, max %s (%d workers)", Bytes(int64(p.PoolPSSBytes)),
			Bytes(int64(p.WorkerPSS.P50)), Bytes(int64(p.WorkerPSS.P95)), Bytes(int64(p.WorkerPSS.Max)), p.Workers)
	}
	line += fmt.Sprintf("; CPU %.2f ms a request, backend %s, client %s, machine %s busy of %d", p.CPUPerRequestMs, cores(p.BackendCores), cores(p.ClientCores), cores(p.MachineCores), s.Cores)
	return line
}

// rate is "392 [385, 398]".
func rate(f Figure) string {
	s := num(f.Median)
	if len(f.CI95) == 2 {
		s += " [" + num(f.CI95[0]) + ", " + num(f.CI95[1]) + "]"
	}
	return s
}

// num is a rate, whole from 100 on.
func num(v float64) string {
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

// writeTable writes the sizing table: per pool size, its capacity and its
// memory and CPU at the answer.
func (s *Sizing) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var confs []float64
	for _, p := range s.Points {
		confs = append(confs, trials.MedianConfidence(len(p.Searches)))
	}
	fmt.Fprintf(tw, "%s\tcapacity req/s (median [%s])\trange\tpool PSS\tworker PSS p50/p95/max\tCPU ms/req\tbackend/client/machine cores\n", s.Factor, trials.IntervalLabel(confs...))
	for _, p := range s.Points {
		name := p.Level
		if p.Others != "" {
			name += " (" + p.Others + ")"
		}
		if len(p.Searches) == 0 {
			fmt.Fprintf(tw, "%s\tnot measured\t\t\t\t\t\n", name)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s to %s\t%s\t%s / %s / %s\t%.2f\t%.2f / %.2f / %.2f\n", name, rate(p.Capacity), num(p.Min), num(p.Max),
			Bytes(int64(p.PoolPSSBytes)), Bytes(int64(p.WorkerPSS.P50)), Bytes(int64(p.WorkerPSS.P95)), Bytes(int64(p.WorkerPSS.Max)),
			p.CPUPerRequestMs, p.BackendCores, p.ClientCores, p.MachineCores)
	}
	tw.Flush()
}
