package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/cli"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// capacityOptions are the flags of capacity: bench's load flags (--slo
// required) and the search's own.
type capacityOptions struct {
	loadOptions
	wide       bool
	model      string
	start      float64
	max        float64
	resolution string
	confirm    time.Duration
	maxTime    time.Duration
	warmup     time.Duration
	out        string
	format     string
}

// Defaults of capacity.
const (
	capacityStepTime    = 5 * time.Second
	capacityCeiling     = 256   // open model: requests in flight (-c)
	capacityMaxRate     = 1e7   // open model: --max
	capacityMaxConc     = 10000 // closed model: --max
	capacityStepOverrun = 250 * time.Millisecond
	// capacityConfirmTimes is the default --confirm, in steps, and
	// capacityConfirmFloor the shortest default: a confirmation of a few
	// seconds holds too few requests past the percentile to meet the
	// machine's stalls, which an hour at the answer would meet.
	capacityConfirmTimes = 5
	capacityConfirmFloor = 30 * time.Second
)

const capacityUsage = `Usage: backbench capacity --slo OBJECTIVE [--slo ...] [flags] URL

Finds the highest load the backend sustains within every objective. Open
model (default): arrival rates from --start, doubled until a step fails,
then bisected between the last passing and the first failing rate until
they are within --resolution. A step passes when its objectives hold and
its load was held: the backend served the asked rate (within 2%) and
neither the requests in flight nor the latency grew from the step's first
half to its second. A step that cannot tell is run again, twice as long,
up to 4 times -t (one whose objectives held but whose load grew, once at
twice -t); a failure at the first rate, or below a rate that passed, is
measured again before the search goes below it. The answer is confirmed
by one run of --confirm (default 5 times -t, at least 30 s); a failed
confirmation steps down by --resolution (at least 5%) and is confirmed
again, at most 4 levels in all.
--model closed searches the concurrency (-c) instead. Each step is the run
"backbench bench --rate R -t T -c C" makes (closed: "-c N -t T"), after an
uncounted warm-up at the same load.

OBJECTIVE: p50|p90|p99|p99.9|max<=DURATION (p99<=50ms) or errors<=PERCENT
(errors<=1%: failed requests and non-2xx answers). Latencies count from
each request's intended start in the open model.

Prints the answer, then every step; writes DIR/capacity.json, capacity.svg
and capacity.png (p99 against the offered load, the objective as a line).
Exit status 3 when no step met the objectives.

Flags:
`

// newCapacityFlags builds capacity's flags: the search's own, then bench's
// load flags (-t is a step's length; -c the open model's ceiling).
func newCapacityFlags(o *capacityOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("capacity", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Var(cli.NewChoice(&o.model, "open", "open", "closed"), "model", "open: search the arrival rate (--rate); closed: search the concurrency (-c)")
	fs.Var(cli.NewFinite(&o.start, 0), "start", "first level tried: a rate in req/s (default 10) or a concurrency (default 1)")
	fs.Var(cli.NewFinite(&o.max, 0), "max", "highest level tried (default: 10000000 req/s, or a concurrency of 10000)")
	fs.StringVar(&o.resolution, "resolution", "2%", "stop bisecting when the passing and failing levels are within `R` (a percentage or a ratio); a failed confirmation steps down by R, at least 5%")
	fs.Var(cli.NewSeconds(&o.confirm, 0), "confirm", "confirm the answer by one run this long before giving it (seconds or a duration; 0: none); a failed confirmation steps down by --resolution")
	fs.Var(cli.NewSeconds(&o.maxTime, 5*time.Minute), "max-time", "bound of the whole search (seconds or a duration: 5m); at the bound, the best passing step so far")
	fs.Var(cli.NewSeconds(&o.warmup, time.Second), "warmup", "uncounted warm-up before each step at the same load (seconds or a duration; 0: none)")
	fs.StringVar(&o.out, "out", ".", "write capacity.json, capacity.svg and capacity.png into `DIR`")
	fs.Var(cli.NewChoice(&o.format, "text", "text", "json"), "format", "report on stdout: text or json (the JSON of capacity.json)")
	fs.BoolVar(&o.wide, "wide", false, "print the steps' table as wide as it is, not fitted to 100 columns (or the terminal's width)")
	addLoadFlags(fs, &o.loadOptions)
	o.timeLimit = capacityStepTime
	fs.Lookup("timelimit").Usage = "length of each step in seconds (or a duration: 10s)"
	fs.Lookup("timelimit").DefValue = "5"
	fs.Lookup("confirm").DefValue = "5 times -t, at least 30 s"
	fs.Lookup("concurrency").Usage = "open model: the ceiling of requests in flight (the closed model searches it)"
	fs.Lookup("concurrency").DefValue = strconv.Itoa(capacityCeiling)
	// Bench's flags that a search sets itself or cannot use (refused by
	// validateCapacity).
	for _, name := range []string{"requests", "rate", "raw", "start-at"} {
		_ = fs.MarkHidden(name)
	}
	return fs
}

// capacityPlan is a validated capacity command.
type capacityPlan struct {
	r    *loadPlan
	cfg  capacity.Config
	warm time.Duration // before each step
}

// validateCapacity checks the flags and the URL and builds the plan; every
// error is a usage error, found before any connection is made.
func validateCapacity(fs *pflag.FlagSet, o *capacityOptions) (*capacityPlan, error) {
	if fs.NArg() != 1 {
		return nil, usagef("capacity: want exactly one URL, got %d (see backbench capacity --help)", fs.NArg())
	}
	closed := o.model == capacity.ModelClosed
	for _, f := range []struct{ name, why string }{
		{"requests", "each step runs for -t seconds"},
		{"rate", "the search sets the rate"},
		{"raw", "a search makes many runs"},
		{"start-at", "a search's steps depend on each other, so generators do not merge"},
	} {
		if fs.Changed(f.name) {
			return nil, usagef("capacity: --%s does not apply: %s", f.name, f.why)
		}
	}
	switch {
	case len(o.slo) == 0:
		return nil, usagef("capacity: want at least one --slo objective, e.g. --slo 'p99<=50ms'")
	case closed && fs.Changed("concurrency"):
		return nil, usagef("capacity: -c does not apply with --model closed: the search sets it (--start and --max bound it)")
	case o.timeLimit <= 0:
		return nil, usagef("capacity: -t must be greater than 0 seconds")
	case o.start < 0 || o.max < 0:
		return nil, usagef("capacity: --start and --max must be greater than 0")
	}
	res, err := cli.ParseRatio("--resolution", o.resolution)
	if err != nil {
		return nil, err
	}
	if res <= 0 || res >= 1 {
		return nil, usagef("capacity: bad --resolution %q: want more than 0%% and less than 100%%", o.resolution)
	}
	if !closed && !fs.Changed("concurrency") {
		o.concurrency = capacityCeiling
	}
	start, top := o.start, o.max
	if start == 0 {
		start = map[bool]float64{false: 10, true: 1}[closed]
	}
	if top == 0 {
		top = map[bool]float64{false: capacityMaxRate, true: capacityMaxConc}[closed]
	}
	if closed && (start != float64(int(start)) || top != float64(int(top)) || top > 1_000_000) {
		return nil, usagef("capacity: --start and --max are whole concurrencies in the closed model (at most 1000000)")
	}
	if !closed && top > capacityMaxRate {
		return nil, usagef("capacity: --max %g: the rate is at most 10000000 req/s", top)
	}
	if closed && o.max == 0 {
		// The default ceiling of the search stays within what the file
		// limit allows; a --max given above it is refused below.
		top = min(top, float64(execute.MaxConcurrency()))
		start = min(start, top)
	}
	if start > top {
		return nil, usagef("capacity: --start %g is above --max %g", start, top)
	}
	if closed {
		if err := plan.CheckFiles(fmt.Sprintf("capacity: --max %d", int(top)), int(top)); err != nil {
			return nil, err
		}
	}
	r, err := validateLoad(fs, &o.loadOptions, fs.Arg(0))
	if err != nil {
		return nil, err
	}
	if !fs.Changed("confirm") {
		o.confirm = max(capacityConfirmTimes*o.timeLimit, capacityConfirmFloor)
	}
	return &capacityPlan{r: r, warm: o.warmup, cfg: capacity.Config{
		Objectives: r.objectives, Start: start, Max: top, Integer: closed, Resolution: res,
		Step: o.timeLimit, Confirm: o.confirm, MaxTime: o.maxTime, Overhead: o.warmup + capacityStepOverrun,
	}}, nil
}

// capacityCmd runs the capacity command.
func capacityCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o capacityOptions
	fs := newCapacityFlags(&o)
	if err := parseFlags(fs, capacityUsage, args, stdout); err != nil {
		return err
	}
	p, err := validateCapacity(fs, &o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return usagef("capacity: cannot create --out directory: %v", err)
	}
	// No connection without a request: a Unix socket path is checked
	// here, and each step's own first dials decide reachability.
	if err := execute.CheckSockets(p.r.Target, p.r.Upstreams, stderr); err != nil {
		return &unreachableError{err}
	}
	rep := capacity.Report{Model: o.model, Objectives: p.cfg.Objectives, MaxTime: o.maxTime}
	if !o.quiet {
		fmt.Fprintf(stderr, "Searching the capacity of %s (%s model, %s per step, a %s confirmation; at most %s)\n", p.r.Target.URL, o.model,
			capacity.FormatLength(o.timeLimit), capacity.FormatLength(p.cfg.Confirm), o.maxTime)
		p.cfg.OnStep = func(st capacity.Step) {
			v := "pass"
			if !st.Pass {
				v = "FAIL"
			}
			if st.Held.Verdict != capacity.HeldYes {
				v += " (" + st.Held.Why + ")"
			}
			kind := ""
			if st.Confirm {
				kind = " confirmation"
			}
			fmt.Fprintf(stderr, "  %s %s, %s%s: %s, p99 %s, errors %.2f%%\n", rep.FormatLevel(st.Level), map[bool]string{false: "req/s", true: "connections"}[p.cfg.Integer],
				capacity.FormatLength(st.Length), kind, v, capacity.FormatMs(st.P99), st.ErrorRate*100)
		}
	}
	started := time.Now()
	res, err := p.search(ctx, stderr)
	if err != nil {
		return err
	}
	rep.Result = res
	env := stats.CurrentEnvironment(version())
	rep.Started, rep.Ended, rep.Environment = started, time.Now(), &env
	if err := p.write(&rep, o.out, o.concurrency); err != nil {
		return err
	}
	if o.format == "json" {
		if err := writeCapacityJSON(stdout, &rep, o.concurrency); err != nil {
			return err
		}
	} else {
		// The answer stays one line (scripts read it); the table fits.
		width := tableWidth(o.wide, stdout)
		fmt.Fprintln(stdout, rep.Answer())
		warm := ""
		if p.warm > 0 {
			warm = " after a " + capacity.FormatLength(p.warm) + " warm-up"
		}
		ceiling := ""
		if !p.cfg.Integer {
			ceiling = fmt.Sprintf(", at most %d in flight", o.concurrency)
		}
		confirm := ", no confirmation run"
		if p.cfg.Confirm > 0 {
			confirm = ", a " + capacity.FormatLength(p.cfg.Confirm) + " confirmation run"
		}
		fmt.Fprintf(stdout, "\nCapacity search: %s, %s model%s, %s per step%s%s, %d steps in %.1f s\n\n",
			p.r.Target.URL, o.model, ceiling, capacity.FormatLength(o.timeLimit), warm, confirm, len(res.Steps), time.Since(started).Seconds())
		if err := rep.TableFit(stdout, width); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nWrote %s\n", strings.Join(capacityFiles(o.out), ", "))
	}
	switch {
	case res.Interrupted:
		return errInterrupted
	case res.Best < 0:
		return &sloError{[]string{"no step met every objective"}}
	}
	return nil
}

// search runs the search through the driver: each step is the run bench
// makes, after an uncounted warm-up at the same load (--warmup), judged
// by whether its load held (capacity.Judge over capacity.StepWindows
// windows); a step after a failing one waits for the backend to settle.
func (p *capacityPlan) search(ctx context.Context, stderr io.Writer) (capacity.Result, error) {
	sched := driver.NewCapacity(ctx, p.cfg)
	_, err := driver.Run(ctx, driver.Config{
		Schedule: sched,
		Warmup:   driver.Warmup{Duration: p.warm},
		Options:  execute.Options{Stderr: stderr, Quiet: true, Observe: true, Version: version(), Privacy: p.r.privacy},
	}, []driver.Series{{Label: p.r.Target.URL, Plan: p.r.Plan}})
	res, serr := sched.Result()
	if re := (*driver.RunError)(nil); errors.As(err, &re) {
		return res, executeError(re.Err)
	}
	if err != nil {
		return res, err
	}
	return res, serr
}

// writeCapacityJSON writes capacity.json: the report's JSON with every
// step's record, a document of kind capacity.
func writeCapacityJSON(w io.Writer, rep *capacity.Report, ceiling int) error {
	j := rep.JSON(ceiling)
	return document.Write(w, &document.Capacity{JSONReport: &j})
}

// capacityFiles are the paths of the files capacity writes into dir.
func capacityFiles(dir string) []string {
	var out []string
	for _, n := range []string{"capacity.json", "capacity.svg", "capacity.png"} {
		out = append(out, filepath.Join(dir, n))
	}
	return out
}

// write writes capacity.json and the chart into dir.
func (p *capacityPlan) write(rep *capacity.Report, dir string, ceiling int) error {
	var pts []report.CapacityPoint
	for _, st := range rep.Result.Steps {
		pts = append(pts, report.CapacityPoint{Load: st.Level, P99Ms: st.P99, Pass: st.Pass})
	}
	bound := 0.0
	for _, o := range rep.Objectives {
		if o.Metric == capacity.MetricP99 {
			bound = o.Bound
		}
	}
	xLabel := "offered rate (req/s)"
	if p.cfg.Integer {
		xLabel = "concurrency (connections)"
	}
	writers := []func(io.Writer) error{
		func(w io.Writer) error { return writeCapacityJSON(w, rep, ceiling) },
		func(w io.Writer) error { return report.CapacityChart(w, pts, xLabel, bound, "svg") },
		func(w io.Writer) error { return report.CapacityChart(w, pts, xLabel, bound, "png") },
	}
	// Written whole to temporary files, then renamed into place together.
	var files []*report.AtomicFile
	for i, name := range capacityFiles(dir) {
		f, err := report.CreateAtomic(name)
		if err != nil {
			return fmt.Errorf("capacity: %w", err)
		}
		defer f.Abort()
		files = append(files, f)
		if err := writers[i](f); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return report.CommitAll(files)
}
