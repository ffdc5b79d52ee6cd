package stats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/load"
)

// Policy says how the records of a merge ran, which decides the figures
// that do not simply add up: the time the merged run took, its
// concurrency, its rate and its client's resource use.
type Policy uint8

const (
	// Together is the policy of generators that ran at the same time
	// against one target (backbench merge, a sweep level's generators):
	// concurrencies, request budgets and open-model rates add up (as if
	// one client had run every worker), the run's time is the window from
	// the earliest start to the latest end, and the client's CPU time,
	// share and cores add up (as if one client of all their cores had
	// run), keeping the worst scheduler lateness and every warning.
	Together Policy = iota
	// InTurn is the policy of trials of one plan that ran one after the
	// other (bench --repeat, a level's trials): their times add up, the
	// concurrency and the rate are a trial's, the request budgets add up,
	// and the client's health is the first trial's.
	InTurn
)

// String names the policy.
func (p Policy) String() string {
	if p == InTurn {
		return "in turn"
	}
	return "together"
}

// PlanDiff is the one rule of "the same plan", for every merge: it lists
// how plan b differs from plan a, as "key A vs B" with the record's JSON
// names, in key order; none when they are the same plan. The request
// budget (-n) may differ; the concurrency may not (a generator's, a
// trial's); plans that differ only where their JSON does not (a nil
// list against an empty one) are the same; the protocol's wire words are compared only when both records
// have them (a record written before they existed has none, and still
// merges with a newer one of the same plan).
func PlanDiff(a, b *Plan) []string {
	x, y := *a, *b
	x.Requests, y.Requests = 0, 0
	if x.Wire == nil || y.Wire == nil {
		x.Wire, y.Wire = nil, nil
	}
	if reflect.DeepEqual(x, y) {
		return nil
	}
	ma, mb := planKeys(&x), planKeys(&y)
	keys := maps.Collect(maps.All(ma))
	maps.Copy(keys, mb)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !bytes.Equal(ma[k], mb[k]) {
			out = append(out, fmt.Sprintf("%s %s vs %s", k, orNone(ma[k]), orNone(mb[k])))
		}
	}
	// Plans equal in JSON (a nil list against an empty one) are the same
	// plan: the same as saved.
	return out
}

func orNone(j json.RawMessage) string {
	if j == nil {
		return "(none)"
	}
	return string(j)
}

// PlanError is a Merger's refusal of a record of another plan (see
// PlanDiff): Differences says how it differs from the first record's.
type PlanError struct {
	Differences []string
}

// Error lists the differences.
func (e *PlanError) Error() string {
	return "stats: not the same plan: " + strings.Join(e.Differences, "; ")
}

// Merge merges records of the same plan (PlanDiff) that ran together
// (Together) into one, exactly; see Merger.
func Merge(recs ...*Record) (*Record, error) {
	return MergeAs(Together, recs...)
}

// MergeAs merges records of the same plan under the policy p; see Merger.
func MergeAs(p Policy, recs ...*Record) (*Record, error) {
	if len(recs) == 0 {
		return nil, errors.New("stats: no record to merge")
	}
	m := Merger{Policy: p}
	for _, r := range recs {
		if err := m.Add(r); err != nil {
			return nil, err
		}
	}
	return m.Record(), nil
}

// Merger is the one merge of records, one at a time, keeping only the
// merged result: records read from files one by one are merged in memory
// bounded by the result (its sparse histograms, causes, up to
// MaxErrorSamples messages and the distinct notes), whatever their number.
//
// Every merge is exact where the records are additive: counts and moments
// add, histograms merge bucket by bucket, per-upstream parts add, the
// listen queue counters add up (a listen queue's peak is the larger),
// timelines merge on wall time, and the run spans the earliest start to
// the latest end. The environment, backend, TLS, document length, server
// and listen backlog are the first record's (the first loss of the
// backend too); notes are the union, in the order first seen. What does
// not add up follows Policy (Together or InTurn).
//
// A record of another plan than the first's (PlanDiff) is refused with a
// *PlanError, unless Force: it is then merged under the first record's
// plan, keeping its own concurrency and request budget, and its
// differences are kept (Differences); per-upstream parts are dropped when
// the records do not have the same number.
//
// The zero Merger merges Together and is ready to use.
type Merger struct {
	// Policy says how the records ran.
	Policy Policy
	// Force merges records of other plans (see Merger).
	Force bool

	out   *Record
	n     int
	noUps bool
	// noTargets drops the per-target parts (a forced merge of other mixes).
	noTargets bool
	causes    map[[2]uint8]*Cause
	samples   map[string]int64
	notes     map[string]bool
	// first is the first record's plan, ups its number of upstream parts.
	first Plan
	ups   int
	diffs []string
	// What Together adds up or bounds, from the records as given.
	rate                     float64
	latestStart, earliestEnd time.Time
	client                   ClientHealth
	elapsed                  time.Duration
}

// Len returns how many records were added.
func (m *Merger) Len() int { return m.n }

// Differences lists how the records merged under Force differed from the
// first record's plan, each as "NAME: key A vs B" (NAME as given to
// AddFrom), once each; nil when they did not.
func (m *Merger) Differences() []string { return m.diffs }

// Overlap is the part of the merged window that every record covers: from
// the latest start to the earliest end over the earliest start to the
// latest end, from 0 to 1; 1 for one record. Call it after Record.
func (m *Merger) Overlap() float64 {
	if m.out == nil || m.n < 2 {
		return 1
	}
	w := m.out.EndedAt.Sub(m.out.StartedAt.Time)
	if w <= 0 {
		return 1
	}
	return min(max(float64(m.earliestEnd.Sub(m.latestStart))/float64(w), 0), 1)
}

// Add merges r into the result (AddFrom without a name).
func (m *Merger) Add(r *Record) error { return m.AddFrom("", r) }

// AddFrom merges r, read from name (a file, a generator: it prefixes the
// record's client warnings and its plan differences), into the result.
// It refuses a record of another plan (unless Force) and a record whose
// counts or sums, added to those merged so far, would overflow int64;
// then the result is as it was before the call.
func (m *Merger) AddFrom(name string, r *Record) error {
	if m.out == nil {
		m.start(r)
	} else if d := PlanDiff(&m.first, &r.Plan); len(d) > 0 {
		if !m.Force {
			return &PlanError{Differences: d}
		}
		for _, s := range d {
			if name != "" {
				s = name + ": " + s
			}
			if !slices.Contains(m.diffs, s) {
				m.diffs = append(m.diffs, s)
			}
		}
	}
	if m.Force {
		// Merged under the first plan, each keeping its concurrency and
		// request budget.
		c := *r
		c.Plan = m.first
		c.Plan.Concurrency, c.Plan.Requests = r.Plan.Concurrency, r.Plan.Requests
		if len(r.Upstreams) != m.ups {
			m.dropUpstreams()
		}
		if len(r.Targets) != len(m.out.Targets) || !slices.Equal(r.Plan.Targets, m.first.Targets) {
			m.noTargets = true
			m.out.Targets, m.out.Plan.Targets, m.out.Plan.Weights = nil, nil, nil
		}
		r = &c
	}
	ups := r.Upstreams
	if m.noUps {
		ups = nil
	} else if len(r.Upstreams) != len(m.out.Upstreams) {
		return &PlanError{Differences: []string{fmt.Sprintf("upstreams: %d parts vs %d", len(m.out.Upstreams), len(r.Upstreams))}}
	}
	tgs := r.Targets
	if m.noTargets {
		tgs = nil
	} else if len(tgs) != len(m.out.Targets) {
		return &PlanError{Differences: []string{fmt.Sprintf("targets: %d parts vs %d", len(m.out.Targets), len(tgs))}}
	}
	if err := m.checkSums(r, ups); err != nil {
		return err
	}
	for i := range tgs {
		o, x := &m.out.Targets[i], &tgs[i]
		fits := func(a, b int64) bool { return b <= 0 || a <= math.MaxInt64-b }
		if !fits(o.Requests, x.Requests) || !fits(o.Complete, x.Complete) || !fits(o.Failed, x.Failed) || !fits(o.BodyBytes, x.BodyBytes) ||
			!fits(o.Total.N, x.Total.N) || !fits(int64(o.Total.Sum), int64(x.Total.Sum)) {
			return fmt.Errorf("stats: targets[%d]: the merged counts would overflow", i)
		}
	}
	o := m.out
	m.n++
	if m.Policy == InTurn {
		o.Plan.Concurrency = m.first.Concurrency
		m.elapsed += r.Elapsed
	} else {
		o.Plan.Concurrency += r.Plan.Concurrency
		m.rate += r.Plan.Rate
		m.elapsed = max(m.elapsed, r.Elapsed)
		m.addClient(name, &r.Client)
	}
	o.Plan.Requests += r.Plan.Requests
	if r.StartedAt.Before(o.StartedAt.Time) {
		o.StartedAt = r.StartedAt
	}
	if r.EndedAt.After(o.EndedAt.Time) {
		o.EndedAt = r.EndedAt
	}
	if r.StartedAt.After(m.latestStart) {
		m.latestStart = r.StartedAt.Time
	}
	if r.EndedAt.Before(m.earliestEnd) {
		m.earliestEnd = r.EndedAt.Time
	}
	o.Interrupted = o.Interrupted || r.Interrupted
	o.Counts.Merge(&r.Counts)
	for p := range o.Phases {
		o.Phases[p].Merge(&r.Phases[p])
	}
	for i := range ups {
		u, x := &o.Upstreams[i], &ups[i]
		u.Complete += x.Complete
		u.Failed += x.Failed
		u.Total.Merge(&x.Total)
	}
	for i := range tgs {
		u, x := &o.Targets[i], &tgs[i]
		u.Requests += x.Requests
		u.Complete += x.Complete
		u.Failed += x.Failed
		u.BodyBytes += x.BodyBytes
		u.Total.Merge(&x.Total)
	}
	for _, c := range r.Causes {
		k := [2]uint8{uint8(c.Class), uint8(c.Kind)}
		if m.causes[k] == nil {
			cc := c
			cc.Count = 0
			m.causes[k] = &cc
		}
		m.causes[k].Count += c.Count
	}
	for _, e := range r.ErrorSamples {
		if _, ok := m.samples[e.Message]; ok || len(m.samples) < MaxErrorSamples {
			m.samples[e.Message] += e.Count
		}
	}
	if o.BackendLost == nil {
		o.BackendLost = r.BackendLost
	}
	if o.StderrFirstLine == "" {
		o.StderrFirstLine = r.StderrFirstLine
	}
	if o.ListenBacklog == nil {
		o.ListenBacklog = r.ListenBacklog
	}
	o.ListenOverflows = addPtr(o.ListenOverflows, r.ListenOverflows)
	o.ListenDrops = addPtr(o.ListenDrops, r.ListenDrops)
	o.ListenQueues = mergeListenQueues(o.ListenQueues, r.ListenQueues)
	o.Timeline = MergeTimelines(o.Timeline, r.Timeline)
	// A set beside the slice: the union in the order first seen, in time
	// linear in the number of notes (a search of the slice per note made
	// 40,000 notes take seconds).
	for _, n := range r.Notes {
		if !m.notes[n] {
			m.notes[n] = true
			o.Notes = append(o.Notes, n)
		}
	}
	o.rows = append(o.rows, r.rows...)
	o.rawErr = errors.Join(o.rawErr, r.rawErr)
	return nil
}

// addClient adds a generator's client health (Together): CPU time, share
// and cores add up, the worst scheduler lateness is kept and every
// warning, prefixed with name.
func (m *Merger) addClient(name string, h *ClientHealth) {
	c := &m.client
	c.CPUUserSeconds += h.CPUUserSeconds
	c.CPUSysSeconds += h.CPUSysSeconds
	c.CPUPercent += h.CPUPercent
	c.Cores += h.Cores
	c.SchedulerLateMaxMs = max(c.SchedulerLateMaxMs, h.SchedulerLateMaxMs)
	for _, w := range h.Warnings {
		if name != "" {
			w = name + ": " + w
		}
		c.Warnings = append(c.Warnings, w)
	}
}

// dropUpstreams forgets the per-upstream parts of the records added so
// far and of those to come (a forced merge of records of clusters of
// different sizes).
func (m *Merger) dropUpstreams() {
	m.noUps = true
	m.out.Upstreams, m.out.Plan.Upstreams = nil, nil
}

// start makes the result from the first record: its plan, environment,
// client health and the other parts a merge keeps from the first.
func (m *Merger) start(first *Record) {
	out := &Record{Schema: Schema, Plan: first.Plan, Environment: first.Environment, Client: first.Client,
		Backend: first.Backend, TLS: first.TLS, DocumentLength: first.DocumentLength,
		ServerSoftware: first.ServerSoftware, StartedAt: first.StartedAt, EndedAt: first.EndedAt,
		Upstreams: make([]UpstreamRecord, len(first.Upstreams)), Notes: []string{}}
	out.Plan.Upstreams = slices.Clone(first.Plan.Upstreams)
	out.Plan.Concurrency, out.Plan.Requests = 0, 0
	for i, u := range first.Upstreams {
		out.Upstreams[i] = UpstreamRecord{Address: u.Address}
	}
	out.Plan.Targets, out.Plan.Weights = slices.Clone(first.Plan.Targets), slices.Clone(first.Plan.Weights)
	if len(first.Targets) > 0 {
		out.Targets = make([]TargetRecord, len(first.Targets))
		for i, u := range first.Targets {
			out.Targets[i] = TargetRecord{Target: u.Target}
		}
	}
	m.out = out
	m.first, m.ups = first.Plan, len(first.Upstreams)
	m.latestStart, m.earliestEnd = first.StartedAt.Time, first.EndedAt.Time
	m.client = ClientHealth{Scheduling: first.Client.Scheduling, Warnings: []string{}}
	m.causes = map[[2]uint8]*Cause{}
	m.samples = map[string]int64{}
	m.notes = map[string]bool{}
}

// Record returns the merged record (nil before the first Add). Under
// InTurn its time is the records' added up; under Together, for more
// than one record, the window from the earliest start to the latest end,
// with the rates and the client's health added up. The Merger must not
// be used after.
func (m *Merger) Record() *Record {
	out := m.out
	if out == nil {
		return nil
	}
	switch {
	case m.Policy == InTurn:
		out.Elapsed = m.elapsed
	case m.n > 1:
		out.Elapsed = out.EndedAt.Sub(out.StartedAt.Time)
		out.Plan.Rate = m.rate
		out.Client = m.client
	default:
		out.Elapsed = m.elapsed
	}
	out.Causes = []Cause{}
	for _, c := range m.causes {
		out.Causes = append(out.Causes, *c)
	}
	sortCauses(out.Causes)
	out.ErrorSamples = SortedSamples(m.samples)
	return out
}

// checkSums refuses r when one of its counts or sums, added to the
// result's, would overflow int64: saved numbers are checked non-negative
// on read (Validate), so a sum that wraps would turn a large count
// negative ("Complete requests: -9223372036854775808").
func (m *Merger) checkSums(r *Record, ups []UpstreamRecord) error {
	o := m.out
	if m.n == 0 {
		return nil
	}
	var bad string
	fits := func(name string, a, b int64) {
		if bad == "" && b > 0 && a > math.MaxInt64-b {
			bad = name
		}
	}
	fits("plan.concurrency", int64(o.Plan.Concurrency), int64(r.Plan.Concurrency))
	fits("plan.requests", o.Plan.Requests, r.Plan.Requests)
	c, x := &o.Counts, &r.Counts
	for _, f := range countFields(c, x) {
		fits("counts."+f.name, *f.a, *f.b)
	}
	for cl := load.ErrClass(1); cl < load.NumClasses; cl++ {
		fits("counts.failures."+cl.String(), c.Failures[cl], x.Failures[cl])
	}
	fits("counts.failures", c.Failed(), x.Failed())
	for p := range o.Phases {
		a, b := &o.Phases[p].Moments, &r.Phases[p].Moments
		fits("phases."+phaseNames[p]+".count", a.N, b.N)
		fits("phases."+phaseNames[p]+".sum_ns", int64(a.Sum), int64(b.Sum))
		_, carry := bits.Add64(a.SumSq.Lo, b.SumSq.Lo, 0)
		if _, carry = bits.Add64(a.SumSq.Hi, b.SumSq.Hi, carry); bad == "" && carry != 0 {
			bad = "phases." + phaseNames[p] + ".sum_squares_ns2"
		}
	}
	for i := range ups {
		fits("upstreams.complete", o.Upstreams[i].Complete, ups[i].Complete)
		fits("upstreams.failed", o.Upstreams[i].Failed, ups[i].Failed)
		fits("upstreams.total.count", o.Upstreams[i].Total.N, ups[i].Total.N)
		fits("upstreams.total.sum_ns", int64(o.Upstreams[i].Total.Sum), int64(ups[i].Total.Sum))
	}
	for _, cs := range r.Causes {
		if k := [2]uint8{uint8(cs.Class), uint8(cs.Kind)}; m.causes[k] != nil {
			fits("causes.count", m.causes[k].Count, cs.Count)
		}
	}
	for _, e := range r.ErrorSamples {
		fits("error_samples.count", m.samples[e.Message], e.Count)
	}
	if o.ListenOverflows != nil && r.ListenOverflows != nil {
		fits("listen_overflows", *o.ListenOverflows, *r.ListenOverflows)
	}
	if o.ListenDrops != nil && r.ListenDrops != nil {
		fits("listen_drops", *o.ListenDrops, *r.ListenDrops)
	}
	if bad != "" {
		return fmt.Errorf("stats: %s: the sum with the records merged before overflows a 64-bit count", bad)
	}
	return nil
}

// countField names one int64 count of two Counts.
type countField struct {
	name string
	a, b *int64
}

// countFields lists the additive int64 counts of a and b with their JSON
// names (the failures by class apart).
func countFields(a, b *Counts) []countField {
	return []countField{
		{"complete", &a.Complete, &b.Complete}, {"non_2xx", &a.Non2xx, &b.Non2xx},
		{"keep_alive", &a.KeepAlive, &b.KeepAlive}, {"reconnects", &a.Reconnects, &b.Reconnects},
		{"unsolicited", &a.Unsolicited, &b.Unsolicited}, {"unsolicited_bytes", &a.UnsolicitedBytes, &b.UnsolicitedBytes},
		{"drained", &a.Drained, &b.Drained},
		{"slow_connects", &a.SlowConnects, &b.SlowConnects}, {"bytes_read", &a.BytesRead, &b.BytesRead},
		{"body_bytes", &a.BodyBytes, &b.BodyBytes}, {"bytes_written", &a.BytesWritten, &b.BytesWritten},
		{"stderr_bytes", &a.StderrBytes, &b.StderrBytes}, {"late", &a.Late, &b.Late},
		{"queued", &a.Queued, &b.Queued}, {"late_sum_ns", (*int64)(&a.LateSum), (*int64)(&b.LateSum)},
		{"late_max_ns", (*int64)(&a.LateMax), (*int64)(&b.LateMax)},
		{"sched_late_max_ns", (*int64)(&a.SchedMax), (*int64)(&b.SchedMax)},
		{"due", &a.Due, &b.Due}, {"unsent", &a.Unsent, &b.Unsent},
		{"unsent_in_flight", &a.UnsentInFlight, &b.UnsentInFlight},
	}
}

// addPtr adds two optional counts (nil: not read).
func addPtr(a, b *int64) *int64 {
	if b == nil {
		return a
	}
	v := *b
	if a != nil {
		v += *a
	}
	return &v
}

// mergeListenQueues adds the listen queues of another record: the same
// address's drops add up and its peak is the larger.
func mergeListenQueues(out, in []ListenQueue) []ListenQueue {
	for _, q := range in {
		i := slices.IndexFunc(out, func(o ListenQueue) bool { return o.Address == q.Address })
		if i < 0 {
			if q.Drops != nil {
				d := *q.Drops
				q.Drops = &d
			}
			out = append(out, q)
			continue
		}
		o := &out[i]
		o.Backlog, o.PeakQueued = max(o.Backlog, q.Backlog), max(o.PeakQueued, q.PeakQueued)
		o.Drops = addPtr(o.Drops, q.Drops)
	}
	return out
}

// planKeys is p as its JSON object's keys and values: each field under its
// key, encoded as saved; a field its tag omits when empty is absent, and an
// embedded struct's fields (Shape) are the object's own, as in JSON.
func planKeys(p *Plan) map[string]json.RawMessage {
	m := make(map[string]json.RawMessage)
	addKeys(m, reflect.ValueOf(p).Elem())
	return m
}

// addKeys adds the JSON keys and values of the struct v to m.
func addKeys(m map[string]json.RawMessage, v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		f := v.Field(i)
		if name == "-" || !t.Field(i).IsExported() {
			continue
		}
		if name == "" && t.Field(i).Anonymous && f.Kind() == reflect.Struct {
			addKeys(m, f)
			continue
		}
		if name == "" {
			name = t.Field(i).Name
		}
		if strings.Contains(opts, "omitempty") && (f.IsZero() || (f.Kind() == reflect.Slice || f.Kind() == reflect.Map) && f.Len() == 0) {
			continue
		}
		j, err := json.Marshal(f.Interface())
		if err != nil {
			j = []byte(fmt.Sprintf("%q", err.Error()))
		}
		m[name] = j
	}
}
