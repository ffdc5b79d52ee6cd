package studyfile

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/targets"
	"github.com/backbench/backbench/internal/trials"
)

// parseMeasure reads the measurement.
func (p *parser) parseMeasure(key, n *yaml.Node) {
	m, _ := p.mapping(n, "measure", measureKeys)
	n = key // the position of what is missing
	me := &p.s.Measure
	me.Repeat = 1
	k, ok := m["kind"]
	if !ok {
		p.fail(n, "measure has no kind: sweep, bench or capacity")
	}
	me.Kind = p.scalar(k.val, "measure kind")
	if me.Kind != MeasureSweep && me.Kind != MeasureBench && me.Kind != MeasureCapacity {
		p.fail(k.val, "measure kind %q: want sweep, bench or capacity", me.Kind)
	}
	if c, ok := m["concurrency"]; ok {
		me.Levels = p.levels(c.val)
	}
	switch c, has := m["concurrency"]; me.Kind {
	case MeasureSweep:
		if !has {
			p.fail(n, "measure: a sweep needs concurrency levels (e.g. [1, 10, 50] or \"1:500:10\")")
		}
	case MeasureBench:
		if !has {
			p.fail(n, "measure: a bench needs a concurrency level (e.g. concurrency: 10)")
		}
		if len(me.Levels) != 1 {
			p.fail(c.val, "measure: a bench runs one concurrency level, not %d (a sweep runs several)", len(me.Levels))
		}
	case MeasureCapacity:
		if has && len(me.Levels) != 1 {
			p.fail(c.val, "measure: a capacity search takes at most one concurrency level, not %d", len(me.Levels))
		}
	}
	if r, ok := m["requests"]; ok {
		me.Requests = p.integer(r.val, "measure requests", 1, 1<<50)
		if me.Kind == MeasureCapacity {
			p.fail(r.key, "measure: a capacity search's steps are timed: give duration, not requests")
		}
	}
	if r, ok := m["requests"]; ok && len(me.Levels) > 0 && int64(me.Levels[len(me.Levels)-1]) > me.Requests {
		p.fail(r.val, "measure requests: %d is fewer than the highest concurrency level, %d (each worker makes at least one request)", me.Requests, me.Levels[len(me.Levels)-1])
	}
	if d, ok := m["duration"]; ok {
		me.Duration = p.duration(d.val, "measure duration", false) // 0: none, as -t 0
	}
	if me.Requests == 0 && me.Duration == 0 {
		if me.Kind == MeasureCapacity {
			p.fail(n, "measure: a capacity search needs duration (of each step)")
		}
		p.fail(n, "measure needs requests or duration (per level and trial)")
	}
	if r, ok := m["repeat"]; ok {
		me.Repeat = int(p.integer(r.val, "measure repeat", 1, trials.MaxRepeat))
	}
	if w, ok := m["warmup"]; ok {
		me.Warmup = p.integer(w.val, "measure warmup", 0, 1<<50)
	}
	if v, ok := m["noise"]; ok {
		s := p.scalar(v.val, "measure noise")
		f, err := load.ParsePercent(s)
		if err != nil {
			p.fail(v.val, "measure noise %q: %v", s, err)
		}
		me.Noise, me.NoiseSet = f, true
	}
	if t, ok := m["timeout"]; ok {
		// bench's -s: "-s must be greater than 0 seconds".
		me.Timeout = p.duration(t.val, "measure timeout", true)
	}
	if s, ok := m["slo"]; ok {
		list, nodes := p.stringList(s.val, "measure slo", true)
		for j, o := range list {
			// The objectives of --slo, read as bench, sweep and capacity
			// read them.
			if _, err := capacity.Parse(o); err != nil {
				p.fail(nodes[j], "measure slo: %v", err)
			}
		}
		me.SLO = list
	}
	if me.Kind == MeasureCapacity && len(me.SLO) == 0 {
		p.fail(n, "measure: a capacity search needs slo, its objectives (e.g. slo: [\"p99<=100ms\"])")
	}
	if v, ok := m["client_cpus"]; ok && !isNull(v.val) {
		me.ClientCPUs = p.cpus(v.val, "measure client_cpus")
	}
	if v, ok := m["pin"]; ok && !isNull(v.val) {
		me.Pin = strings.TrimSpace(p.scalar(v.val, "measure pin"))
		if me.Pin != PinAuto && me.Pin != "" {
			p.fail(v.val, "measure pin %q: want auto (or client_cpus here and cpus on each backend)", me.Pin)
		}
	}
	p.parseUntil(m)
	p.parseMix(m)
	p.parseSizing(m, n)
}

// parseUntil reads until, budget and max_repeat: rounds run until every
// pair is decided.
func (p *parser) parseUntil(m map[string]pair) {
	me := &p.s.Measure
	if v, ok := m["until"]; ok && !isNull(v.val) {
		me.Until = strings.TrimSpace(p.scalar(v.val, "measure until"))
		if me.Until != UntilDecided {
			p.fail(v.val, "measure until %q: want decided (or no until: the fixed repeat rounds)", me.Until)
		}
		if me.Kind == MeasureCapacity {
			p.fail(v.key, "measure until: a capacity study runs its repeat searches; until: decided is for a sweep or a bench")
		}
	}
	if v, ok := m["budget"]; ok {
		if me.Until == "" {
			p.fail(v.key, "measure budget: only with until: decided (the rounds' time limit)")
		}
		me.Budget = p.duration(v.val, "measure budget", true)
	}
	if v, ok := m["max_repeat"]; ok {
		if me.Until == "" {
			p.fail(v.key, "measure max_repeat: only with until: decided (the most rounds)")
		}
		me.MaxRepeat = int(p.integer(v.val, "measure max_repeat", trials.DefaultMinRounds, trials.MaxRepeat))
	}
}

// parseMix reads the request mix of every series: targets (a targets
// file, as --targets) or access_log (a log replayed, as --access-log,
// with log_format and replay_methods), each path relative to the study
// file's directory; the file is read now, so that a bad one is refused
// before anything starts.
func (p *parser) parseMix(m map[string]pair) {
	me := &p.s.Measure
	rel := func(n *yaml.Node, what string) string {
		s := strings.TrimSpace(p.scalar(n, what))
		if s == "" {
			p.fail(n, "%s: want a file name", what)
		}
		if !filepath.IsAbs(s) {
			s = filepath.Join(filepath.Dir(p.file), s)
		}
		return s
	}
	t, hasT := m["targets"]
	a, hasA := m["access_log"]
	hasT, hasA = hasT && !isNull(t.val), hasA && !isNull(a.val)
	if hasT && hasA {
		p.fail(a.key, "measure: targets and access_log: give one (a targets file, or a log to replay)")
	}
	if hasT {
		me.Targets = rel(t.val, "measure targets")
		if _, err := targets.ReadFile(me.Targets, nil); err != nil {
			p.fail(t.val, "measure targets: %v", err)
		}
	}
	for _, k := range []string{"log_format", "replay_methods"} {
		if v, ok := m[k]; ok && !isNull(v.val) && !hasA {
			p.fail(v.key, "measure %s reads an access log: add access_log", k)
		}
	}
	if !hasA {
		return
	}
	me.AccessLog = rel(a.val, "measure access_log")
	if v, ok := m["log_format"]; ok && !isNull(v.val) {
		me.LogFormat = p.scalar(v.val, "measure log_format")
	}
	var methods []string
	if v, ok := m["replay_methods"]; ok && !isNull(v.val) {
		list, _ := p.stringList(v.val, "measure replay_methods", true)
		var err error
		if methods, err = targets.ParseMethods(strings.Join(list, ",")); err != nil {
			p.fail(v.val, "measure replay_methods: %v", err)
		}
		me.ReplayMethods = strings.Join(methods, ",")
	}
	if _, err := targets.ReadLog(me.AccessLog, nil, me.LogFormat, methods); err != nil {
		p.fail(a.val, "measure access_log: %v", err)
	}
}

// PinAuto is measure pin's one value: divide the machine's CPUs between
// the client and the backends (load.SplitCPUs).
const PinAuto = "auto"

// cpus reads a CPU list as taskset -c takes it (load.ParseCPUs), each
// CPU one this machine has.
func (p *parser) cpus(n *yaml.Node, what string) []int {
	s := p.scalar(n, what)
	cpus, err := load.ParseCPUs(s)
	if err == nil {
		err = load.CheckCPUs(cpus, machineCPUs())
	}
	if err != nil {
		p.fail(n, "%s %q: %v", what, s, err)
	}
	return cpus
}

// machineCPUs are the CPUs of this machine (a variable for the tests).
var machineCPUs = load.MachineCPUs

// pinAuto gives pin: auto's shares: the client the first half of the
// machine's CPUs rounded down (at least one), the backends the rest. A
// client_cpus or a backend's cpus given in the file is kept. On a machine
// of one CPU nothing is pinned, and PinNote says so.
func (p *parser) pinAuto() {
	me := &p.s.Measure
	if me.Pin != PinAuto {
		return
	}
	all := machineCPUs()
	client, backends := load.SplitCPUs(all)
	if len(client) == 0 {
		me.PinNote = fmt.Sprintf("pin: auto pinned nothing: this machine has %d CPU, nothing to divide between the client and the backends", len(all))
		return
	}
	if len(me.ClientCPUs) == 0 {
		me.ClientCPUs = client
	}
	for i := range p.s.Backends {
		if len(p.s.Backends[i].CPUs) == 0 {
			p.s.Backends[i].CPUs = backends
		}
	}
}

// levels reads measure's concurrency as sweep's -c reads it
// (load.ParseLevels): one level, a spec ("1:500:10", "1,2,4"), or a
// list of levels and specs, read as the spec of its items joined by
// commas (the levels must increase across them, as within one). An error
// is the spec's, at the item where the spec first fails.
func (p *parser) levels(n *yaml.Node) []int {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		s := p.scalar(n, "measure concurrency")
		lv, err := load.ParseLevels(s)
		if err != nil {
			p.fail(n, "measure concurrency: %v", err)
		}
		return lv
	}
	items := p.sequence(n, "measure concurrency")
	if len(items) == 0 {
		p.fail(n, "measure concurrency: an empty list")
	}
	specs := make([]string, len(items))
	for i, it := range items {
		specs[i] = p.scalar(it, "measure concurrency")
	}
	lv, err := load.ParseLevels(strings.Join(specs, ","))
	if err == nil {
		return lv
	}
	// The spec reads its items in order, so that once a prefix of the
	// items fails every longer one does: the first failing prefix ends
	// at the item to blame.
	k := sort.Search(len(items), func(i int) bool {
		_, e := load.ParseLevels(strings.Join(specs[:i+1], ","))
		return e != nil
	})
	p.fail(items[min(k, len(items)-1)], "measure concurrency: %v", err)
	return nil
}
