package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// SweepOptions are the options of a sweep's series: the load they share
// and what tells them apart.
type SweepOptions struct {
	// Load is the load of every series; its URL, concurrency and backend
	// processes are each series' own.
	Load Options
	// Args are the series as given: [LABEL=]URL each.
	Args []string
	// KeepAliveModes is --keepalive-modes: "", or a list of on and off
	// ("both": off,on).
	KeepAliveModes string
	// BackendPIDs and BackendPIDFiles are --backend-pid [LABEL=]PID and
	// --backend-pidfile [LABEL=]FILE.
	BackendPIDs, BackendPIDFiles []string
	// Levels is -c SPEC: the concurrency levels (load.ParseLevels).
	Levels string
	// StopOnErrors is whether --stop-error-rate was given, StopErrorRate
	// its value read as a ratio.
	StopOnErrors  bool
	StopErrorRate float64
	// Warmup is --warmup, in requests before each level, and WarmupSet
	// whether it was given (default: driver.DefaultWarmup).
	Warmup    int64
	WarmupSet bool
	// Baseline is --baseline: a series label or a LABEL given ("": the
	// first series).
	Baseline string
}

// Sweep is a sweep's series built: a plan each and the backend each names.
type Sweep struct {
	// Series are the series in order, each copy of a URL per keep-alive
	// mode a series of its own.
	Series []sweep.Series
	// Backends names the backend of each series (its factor "backend"):
	// the LABEL of LABEL=URL, "" for an unlabelled URL.
	Backends []string
	// Objectives are the --slo objectives every level is judged by.
	Objectives []capacity.Objective
	// Names are the series' labels and the LABELs given, which --baseline
	// may name.
	Names map[string]bool
	// Config is the sweep's configuration: its levels, each level's
	// budget and warm-up, and the stop rule.
	Config sweep.Config
	// Baseline is the label the others are compared with: --baseline, or
	// the first series' label.
	Baseline string
}

// Build checks the levels and the series, builds the series' plans
// (Options.Build each) and the sweep's configuration; every error is an
// *Error, found before any connection is made.
func (o *SweepOptions) Build() (*Sweep, error) {
	if o.Levels == "" {
		return nil, errorf("sweep: --concurrency SPEC is required (e.g. 1:500:10 or 1,2,4,8)")
	}
	levels, err := load.ParseLevels(o.Levels)
	if err != nil {
		return nil, errorf("sweep: %v", err)
	}
	maxLevel := levels[len(levels)-1]
	if err := CheckFiles(fmt.Sprintf("sweep: the highest level, %d,", maxLevel), maxLevel); err != nil {
		return nil, err
	}
	kas, err := KeepAliveModes(o.KeepAliveModes, o.Load.KeepAlive)
	if err != nil {
		return nil, err
	}
	if o.Warmup < 0 {
		return nil, errorf("sweep: --warmup %d: want 0 or more requests", o.Warmup)
	}
	pids, err := parseSeriesPIDs(o.BackendPIDs, o.BackendPIDFiles)
	if err != nil {
		return nil, err
	}
	type parsed struct {
		label string
		l     *Load
	}
	var targets []parsed
	defaults := map[string]int{}
	anyTLS := false
	for _, arg := range o.Args {
		if arg == "on" || arg == "off" || arg == "both" {
			return nil, errorf("sweep: %q is not a URL; --keepalive takes no value, --keepalive-modes %s does", arg, arg)
		}
		label, url, err := SplitLabel(arg)
		if err != nil {
			return nil, err
		}
		po, usesTLS := o.Load.ForSeries(url)
		po.Concurrency = 1 // the levels are checked below
		po.BackendPIDs, po.BackendPIDFile = pids.of(label)
		anyTLS = anyTLS || usesTLS
		l, err := po.Build()
		if err != nil {
			return nil, err
		}
		if l.Requests > 0 && int64(maxLevel) > l.Requests {
			return nil, errorf("sweep: -n %d is less than the highest level %d: cannot use more workers than requests", l.Requests, maxLevel)
		}
		if label == "" {
			label = l.Target.Scheme + "/" + l.Target.Network
			defaults[label]++
		}
		targets = append(targets, parsed{label, l})
	}
	if o.Load.Insecure && !anyTLS {
		return nil, errorf("--insecure applies to https:// targets only")
	}
	// One LABEL on several URLs names one backend reached in several
	// ways: each series is told apart by the factor levels in which its
	// URL differs from the others of that label ("pool tcp", "pool unix").
	byLabel := map[string][]trials.Factors{}
	for _, t := range targets {
		byLabel[t.label] = append(byLabel[t.label], sweep.PlanFactors(t.l.Plan))
	}
	s := &Sweep{Names: map[string]bool{}}
	for _, t := range targets {
		label, backend := t.label, t.label
		if defaults[label] > 0 {
			backend = "" // no label given: the backend is not named
		}
		if defaults[label] > 1 {
			label = t.l.ShownURL() // the short default is ambiguous
			backend = label
		} else if fs := byLabel[label]; len(fs) > 1 && defaults[label] == 0 {
			label += sweep.FactorWords(sweep.PlanFactors(t.l.Plan), fs)
		}
		for _, ka := range kas {
			r := *t.l.Plan
			r.KeepAlive = ka
			l := label
			if len(kas) > 1 {
				l += map[bool]string{false: " no-ka", true: " ka"}[ka]
			}
			if s.Names[l] {
				return nil, errorf("sweep: two series are labelled %q (use LABEL=URL)", l)
			}
			s.Names[l] = true
			s.Series = append(s.Series, sweep.Series{Label: l, Plan: &r})
			s.Backends = append(s.Backends, backend)
		}
	}
	for l := range pids.labelled {
		if byLabel[l] == nil {
			return nil, errorf("sweep: --backend-pid(file) %s=...: no series is labelled %q", l, l)
		}
	}
	for l := range byLabel {
		s.Names[l] = true
	}
	s.Objectives = targets[0].l.Objectives
	s.Baseline = o.Baseline
	if s.Baseline == "" {
		s.Baseline = s.Series[0].Label
	} else if !s.Names[s.Baseline] {
		labels := make([]string, len(s.Series))
		for i, se := range s.Series {
			labels[i] = se.Label
		}
		return nil, errorf("sweep: --baseline %q is not a series label (%s)", s.Baseline, strings.Join(labels, ", "))
	}
	r0 := s.Series[0].Plan
	s.Config = sweep.Config{Levels: levels, EndUnreachable: true, Requests: r0.Requests, Duration: o.Load.Duration,
		StopOnErrors: o.StopOnErrors, StopErrorRate: o.StopErrorRate, Warmup: driver.DefaultWarmup(r0.Requests, o.Load.Duration)}
	if o.WarmupSet {
		s.Config.Warmup = driver.Warmup{Requests: o.Warmup}
	}
	return s, nil
}

// SplitLabel splits "LABEL=URL"; a "=" after the scheme's "://" belongs to
// the URL (a query string).
func SplitLabel(arg string) (label, url string, err error) {
	eq, scheme := strings.Index(arg, "="), strings.Index(arg, "://")
	if eq < 0 || (scheme >= 0 && scheme < eq) {
		return "", arg, nil
	}
	label, url = strings.TrimSpace(arg[:eq]), arg[eq+1:]
	if label == "" {
		return "", "", errorf("sweep: empty label in %q (want LABEL=URL)", load.RedactURL(arg))
	}
	return label, url, nil
}

// KeepAliveModes reads --keepalive-modes (modes) beside -k (keepAlive):
// the keep-alive setting of each copy of a series, in order.
func KeepAliveModes(modes string, keepAlive bool) ([]bool, error) {
	if modes == "" {
		return []bool{keepAlive}, nil
	}
	var kas []bool
	seen := map[bool]bool{}
	for _, m := range strings.Split(strings.ReplaceAll(modes, "both", "off,on"), ",") {
		ka, ok := map[string]bool{"on": true, "off": false}[strings.TrimSpace(m)]
		if !ok || seen[ka] {
			return nil, errorf("sweep: bad --keepalive-modes %q: want on, off, or on,off", modes)
		}
		seen[ka] = true
		kas = append(kas, ka)
	}
	if keepAlive && seen[false] {
		return nil, errorf("sweep: -k and --keepalive-modes %s contradict each other", modes)
	}
	return kas, nil
}

// seriesPIDs are a sweep's backend processes: the bare ones (every
// series) and those of a label.
type seriesPIDs struct {
	pids     []int
	file     string
	byLabel  map[string][]int
	files    map[string]string
	labelled map[string]bool
}

// parseSeriesPIDs reads --backend-pid [LABEL=]PID and --backend-pidfile
// [LABEL=]FILE (a FILE with a "/" before its first "=" is a bare path).
func parseSeriesPIDs(pidArgs, fileArgs []string) (*seriesPIDs, error) {
	sp := &seriesPIDs{byLabel: map[string][]int{}, files: map[string]string{}, labelled: map[string]bool{}}
	for _, v := range pidArgs {
		label, list, ok := strings.Cut(v, "=")
		if !ok {
			label, list = "", v
		}
		for _, f := range strings.Split(list, ",") {
			pid, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || pid <= 0 || (ok && strings.TrimSpace(label) == "") {
				return nil, errorf("sweep: bad --backend-pid %q: want PID or LABEL=PID", v)
			}
			if ok {
				label = strings.TrimSpace(label)
				sp.byLabel[label] = append(sp.byLabel[label], pid)
				sp.labelled[label] = true
			} else {
				sp.pids = append(sp.pids, pid)
			}
		}
	}
	for _, v := range fileArgs {
		label, file, ok := strings.Cut(v, "=")
		if !ok || strings.Contains(label, "/") {
			if sp.file != "" {
				return nil, errorf("sweep: two --backend-pidfile for every series (%s, %s): give one, or LABEL=FILE", sp.file, v)
			}
			sp.file = v
			continue
		}
		label = strings.TrimSpace(label)
		if label == "" || file == "" || sp.files[label] != "" {
			return nil, errorf("sweep: bad --backend-pidfile %q: want FILE or LABEL=FILE, one per label", v)
		}
		sp.files[label], sp.labelled[label] = file, true
	}
	return sp, nil
}

// of returns the PIDs and the PID file of the series of label: the bare
// ones and the label's own (its file instead of the bare one).
func (sp *seriesPIDs) of(label string) ([]int, string) {
	pids := append(append([]int(nil), sp.pids...), sp.byLabel[label]...)
	file := sp.file
	if f := sp.files[label]; f != "" {
		file = f
	}
	return pids, file
}
