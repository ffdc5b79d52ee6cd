package studyrun

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/backbench/backbench/internal/backend"
	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/procstat"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/trials"
)

// Defaults of a capacity study's searches, beside capacity's own
// (plan.CapacityCeiling, plan.CapacityOpenStart, plan.CapacityMaxRate,
// plan.CapacityStepOverrun), which they share.
const (
	// SizingResolution is how close the passing and failing rates of a
	// search get: 5%, half the knee's tolerance (study.KneeTolerance).
	SizingResolution = 0.05
	// SizingMaxTime bounds one search.
	SizingMaxTime = 10 * time.Minute
	// memInterval is how often the pool's per-process PSS is read.
	memInterval = 100 * time.Millisecond
)

// DefaultConfirm is the length of a search's confirmation run when the
// file and the flags give none: 5 times the step, at least 10 s.
func DefaultConfirm(step time.Duration) time.Duration { return max(5*step, 10*time.Second) }

// ceiling is the open model's most requests in flight of a capacity study.
func (r *runner) ceiling() int {
	if l := r.st.Measure.Levels; len(l) > 0 {
		return l[len(l)-1]
	}
	return plan.CapacityCeiling
}

// measureCapacity runs a capacity study: in each round, every
// configuration alone, in an order shuffled per round: it is started,
// verified, searched (each of its series), and stopped.
func (r *runner) measureCapacity(ctx context.Context) {
	m := r.st.Measure
	f := r.st.SizingFactor()
	confirm := m.Confirm
	switch {
	case confirm == 0:
		confirm = DefaultConfirm(m.Duration)
	case confirm < 0:
		confirm = 0 // none
	}
	sz := &study.Sizing{Factor: f.Name, Setting: f.Setting, Objectives: m.SLO, StepSeconds: m.Duration.Seconds(),
		ConfirmSeconds: confirm.Seconds(), MemoryBudgetBytes: m.Memory, Cores: runtime.NumCPU()}
	if m.Memory > 0 {
		sz.MemoryMargin = study.MemoryMargin
	}
	for si, se := range r.res.Series {
		var others []string
		for _, fa := range r.st.Factors {
			if fa.Name != f.Name {
				others = append(others, fa.Name+"="+se.Levels[fa.Name])
			}
		}
		sz.Points = append(sz.Points, study.SizingPoint{Label: se.Label, Series: si, Config: se.Config,
			Level: se.Levels[f.Name], Others: strings.Join(others, " "), Searches: []study.SizingSearch{}})
	}
	r.res.Sizing = sz
	objs, err := capacity.ParseAll(m.SLO)
	if err != nil { // checked by spec already
		r.res.Notes = append(r.res.Notes, err.Error())
		return
	}
	rounds := r.rounds
	for round := 1; round <= rounds && ctx.Err() == nil; round++ {
		r.res.Rounds = round
		r.logf("round %d of %d", round, rounds)
		order := slices.Clone(r.configs)
		r.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, c := range order {
			if c.dead || ctx.Err() != nil || !r.start(ctx, c) {
				continue
			}
			for _, si := range c.series {
				se, ok := r.search(ctx, c, si, round, objs, confirm)
				if ok {
					sz.Points[si].Searches = append(sz.Points[si].Searches, se)
				}
				if ctx.Err() != nil || c.exited() {
					break
				}
			}
			if c.exited() {
				for _, si := range c.series {
					p := &sz.Points[si]
					p.Searches = slices.DeleteFunc(p.Searches, func(s study.SizingSearch) bool { return s.Round == round })
				}
				r.lost(ctx, c, round, false, round < rounds)
			}
			r.stop(c)
		}
	}
	if ctx.Err() != nil {
		r.res.Incomplete = true
	}
	r.res.Notes = append(r.res.Notes, fmt.Sprintf("each configuration ran alone for its capacity search: started, searched and stopped in each of the %d rounds", rounds))
}

// search runs one capacity search of series si of c through the driver,
// reading the pool's memory during every step.
func (r *runner) search(ctx context.Context, c *config, si, round int, objs []capacity.Objective, confirm time.Duration) (study.SizingSearch, bool) {
	m := r.st.Measure
	seriesPlan := *r.series[si].plan
	seriesPlan.Concurrency = r.ceiling()
	mem := startMem(c.proc)
	defer mem.stop()
	warm := driver.Warmup{Requests: m.Warmup}
	if m.Warmup == 0 {
		warm = driver.Warmup{Duration: min(m.Duration/4, time.Second)}
	}
	var steps []study.SizingStep
	cfg := capacity.Config{Objectives: objs, Start: plan.CapacityOpenStart, Max: plan.CapacityMaxRate, Resolution: SizingResolution,
		Step: m.Duration, Confirm: confirm, MaxTime: SizingMaxTime, Overhead: warm.Duration + plan.CapacityStepOverrun,
		OnStep: func(st capacity.Step) {
			pool, worker, n, procs, busy := mem.take()
			step := stepOf(st, pool, worker, n)
			step.Load.MachineCores, step.Load.Processes = busy, procs
			steps = append(steps, step)
		}}
	sched := driver.NewCapacity(ctx, cfg)
	o := r.o.Exec
	o.Observe, o.Quiet = true, true
	label := r.res.Series[si].Label
	_, err := driver.Run(ctx, driver.Config{Schedule: sched, Warmup: warm, Options: o, KeepOnUnreachable: true},
		[]driver.Series{{Label: label, Plan: &seriesPlan}})
	res, serr := sched.Result()
	if err == nil {
		err = serr
	}
	if err != nil {
		if ctx.Err() == nil {
			r.fail(c, study.FailLost, r.why(c, fmt.Sprintf("backend %q could not be measured: %v", c.res.Name, err), nil))
		}
		return study.SizingSearch{}, false
	}
	if res.Interrupted {
		return study.SizingSearch{}, false
	}
	se := study.SizingSearch{Round: round, Capacity: res.Capacity, Confirmed: res.Confirmed, LimitedBy: res.LimitedBy,
		Reason: res.Reason, Steps: steps}
	if se.LimitedBy == "" {
		se.LimitedBy = capacity.LimitedByBackend
	}
	if se.LimitedBy == capacity.LimitedByClient {
		se.ClientKind = clientKind(res.Reason)
	}
	if res.Best >= 0 && res.Best < len(steps) {
		se.Answer = steps[res.Best].Load
	}
	study.NameLimit(&se, runtime.NumCPU())
	confirmed := ""
	if !se.Confirmed && confirm > 0 {
		confirmed = ", not confirmed"
	}
	r.logf("%s: capacity %.1f req/s within %s (%d steps, limited by the %s%s)", label, res.Capacity, strings.Join(m.SLO, ", "), len(steps), se.LimitedBy, confirmed)
	return se, true
}

// clientKind is the kind of the client's hold a search's reason tells
// (study.ClientCeiling, study.ClientCPU or study.ClientLate).
func clientKind(reason string) string {
	switch {
	case strings.HasPrefix(reason, capacity.ReasonCeiling):
		return study.ClientCeiling
	case strings.HasPrefix(reason, capacity.ReasonClientCPU):
		return study.ClientCPU
	}
	return study.ClientLate
}

// stepOf is a search's step and the pool's memory during it.
func stepOf(st capacity.Step, pool, worker []float64, workers int) study.SizingStep {
	out := study.SizingStep{Rate: st.Level, Achieved: st.AchievedRPS, Seconds: st.Length.Seconds(), P50Ms: st.P50,
		P99Ms: st.P99, MaxMs: st.Max, ErrorRate: st.ErrorRate, Pass: st.Pass, Confirm: st.Confirm, ClientLimit: st.ClientLimit}
	if st.Held.Verdict != capacity.HeldYes {
		out.Held = st.Held.Why
	}
	l := &out.Load
	if len(pool) > 0 {
		var sum float64
		for _, v := range pool {
			sum += v
			l.PeakPSSBytes = max(l.PeakPSSBytes, int64(v))
		}
		l.PoolPSSBytes = sum / float64(len(pool))
	}
	l.WorkerPSS, l.WorkerSamples, l.Workers = study.SpreadOf(worker), len(worker), workers
	if rec := st.Record; rec != nil {
		s := stats.SummaryOf(rec)
		l.Complete = s.Complete
		secs := rec.Elapsed.Seconds()
		if b := s.Backend; b != nil && secs > 0 {
			l.BackendCores = b.CPUSeconds / secs
			if s.Complete > 0 {
				l.CPUPerRequestMs = 1000 * b.CPUSeconds / float64(s.Complete)
			}
			if l.PoolPSSBytes == 0 {
				l.PoolPSSBytes, l.PeakPSSBytes = float64(b.MeanPSSBytes), b.PeakPSSBytes
			}
		}
		l.ClientCores = s.Client.CPUPercent / 100
	}
	return out
}

// memSampler reads the PSS of every process of a backend's tree at
// memInterval: the tree's total, and each worker's (every process but the
// leader, a prefork pool's master; the leader itself when it is alone).
type memSampler struct {
	proc *backend.Process
	// cpu is the machine's CPU reading at the last take.
	cpu    machineCPU
	done   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	pool   []float64
	worker []float64
	most   int
	// procs is the most processes of the tree read, its leader included.
	procs int
}

// startMem starts reading p's tree.
func startMem(p *backend.Process) *memSampler {
	m := &memSampler{proc: p, done: make(chan struct{}), cpu: readMachineCPU()}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(memInterval)
		defer t.Stop()
		for {
			m.sample()
			select {
			case <-m.done:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// sample reads the tree once.
func (m *memSampler) sample() {
	pids := m.proc.PIDs()
	root := m.proc.PID()
	var total float64
	var ws []float64
	read := 0
	for _, pid := range pids {
		v, err := procstat.PSS(pid)
		if err != nil {
			continue
		}
		read++
		total += float64(v)
		if pid != root || len(pids) == 1 {
			ws = append(ws, float64(v))
		}
	}
	if total == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pool = append(m.pool, total)
	m.worker = append(m.worker, ws...)
	m.most = max(m.most, len(ws))
	m.procs = max(m.procs, read)
}

// take returns what was read since the last take (the most workers, and
// the most processes of the tree, its leader included), and the machine's
// busy CPUs over that time, and starts afresh.
func (m *memSampler) take() (pool, worker []float64, workers, procs int, busy float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pool, worker, workers, procs = m.pool, m.worker, m.most, m.procs
	m.pool, m.worker, m.most, m.procs = nil, nil, 0, 0
	now := readMachineCPU()
	busy = now.busySince(m.cpu)
	m.cpu = now
	return
}

// machineCPU is the first line of /proc/stat: the machine's CPU time, in
// ticks, busy and in all, and its CPUs.
type machineCPU struct {
	busy, total float64
	cpus        int
}

// readMachineCPU reads /proc/stat (the zero value where it cannot).
func readMachineCPU() machineCPU {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}
	}
	var c machineCPU
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if i > 0 {
			c.cpus++
			continue
		}
		for k, v := range f[1:] {
			x, _ := strconv.ParseFloat(v, 64)
			if k >= 8 { // guest time is counted in user already
				break
			}
			c.total += x
			if k != 3 && k != 4 { // idle, iowait
				c.busy += x
			}
		}
	}
	return c
}

// busySince is how many CPUs were busy, on average, since the reading a.
func (c machineCPU) busySince(a machineCPU) float64 {
	if c.total <= a.total || c.cpus == 0 {
		return 0
	}
	return float64(c.cpus) * (c.busy - a.busy) / (c.total - a.total)
}

// stop ends the reading.
func (m *memSampler) stop() {
	close(m.done)
	m.wg.Wait()
}

// finishCapacity turns the searches into the sizing figures and answers.
func (r *runner) finishCapacity() {
	sz := r.res.Sizing
	if sz == nil {
		return
	}
	sz.SortPoints(r.st.SizingFactor().Levels)
	sz.Summarize()
	for _, c := range r.res.Configurations {
		if c.Failure != "" {
			r.res.Notes = append(r.res.Notes, c.Failure)
		}
		r.res.Notes = append(r.res.Notes, c.Notes...)
	}
	for _, p := range sz.Points {
		if c := &r.res.Configurations[p.Config]; p.PoolPSSBytes > 0 {
			c.MeanPSSBytes = max(c.MeanPSSBytes, p.PoolPSSBytes)
			c.PeakPSSBytes = max(c.PeakPSSBytes, p.PeakPSSBytes)
			// The tree's processes, the master included, as a sweep
			// counts them (Workers is the pool's, without the master).
			c.MaxProcs = max(c.MaxProcs, p.Processes)
		}
	}
	r.capacitySteps()
	r.res.Comparisons = []trials.Comparison{}
	r.res.Answers = sz.Answers()
	if r.res.Notes == nil {
		r.res.Notes = []string{}
	}
}

// capacitySteps gives every searched series one step (at the ceiling of
// requests in flight) whose trials are its searches: the capacity as the
// requests per second, the latencies, CPU and memory of the step the answer
// rests on. So compare pairs two sizing studies' capacities with verdicts,
// as it pairs two sweeps' levels.
func (r *runner) capacitySteps() {
	for _, p := range r.res.Sizing.Points {
		if len(p.Searches) == 0 {
			continue
		}
		st := study.Step{Concurrency: r.ceiling()}
		for _, se := range p.Searches {
			t := trials.Trial{RequestsPerSecond: se.Capacity, ClientCPUMeasured: true}
			// The step the answer rests on: the last passing one at the
			// capacity; when the client's limit ended the search, the
			// capacity is what the client sent (no step asked it
			// exactly), and the answer rests on its last passing step.
			var at *study.SizingStep
			for i, x := range se.Steps {
				if x.Pass && (x.Rate == se.Capacity || at == nil || at.Rate != se.Capacity) {
					at = &se.Steps[i]
				}
			}
			if x := at; x != nil && se.Capacity > 0 {
				t.P50Ms, t.P99Ms, t.MaxMs, t.MeanMs = x.P50Ms, x.P99Ms, x.MaxMs, x.P50Ms
				t.Finished, t.Seconds = x.Load.Complete, x.Seconds
				t.Failed = int64(x.ErrorRate * float64(x.Load.Complete))
			}
			if a := se.Answer; a.Complete > 0 {
				t.BackendSampled, t.BackendCPUPerRequest, t.BackendPSSBytes = true, a.CPUPerRequestMs/1000, a.PoolPSSBytes
			}
			st.Trials = append(st.Trials, t)
			st.Complete += t.Finished - t.Failed
			st.Failed += t.Failed
		}
		sum := trials.Summarize(st.Trials)
		st.RequestsPerSecond, st.MeanMs = study.FigureOf(sum.RequestsPerSecond), study.FigureOf(sum.MeanMs)
		st.P99Ms, st.MaxMs = study.FigureOf(sum.P99Ms), study.FigureOf(sum.MaxMs)
		r.res.Series[p.Series].Steps = []study.Step{st}
	}
}
