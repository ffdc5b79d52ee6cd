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
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
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
	fs.Var(NewChoice(&o.model, "open", "open", "closed"), "model", "open: search the arrival rate (--rate); closed: search the concurrency (-c)")
	fs.Var(NewFinite(&o.start, 0), "start", "first level tried: a rate in req/s (default 10) or a concurrency (default 1)")
	fs.Var(NewFinite(&o.max, 0), "max", "highest level tried (default: 10000000 req/s, or a concurrency of 10000)")
	fs.StringVar(&o.resolution, "resolution", "2%", "stop bisecting when the passing and failing levels are within `R` (a percentage or a ratio); a failed confirmation steps down by R, at least 5%")
	fs.Var(load.NewSeconds(&o.confirm, 0), "confirm", "confirm the answer by one run this long before giving it (seconds or a duration; 0: none); a failed confirmation steps down by --resolution")
	fs.Var(load.NewSeconds(&o.maxTime, 5*time.Minute), "max-time", "bound of the whole search (seconds or a duration: 5m); at the bound, the best passing step so far")
	fs.Var(load.NewSeconds(&o.warmup, time.Second), "warmup", "uncounted warm-up before each step at the same load (seconds or a duration; 0: none)")
	fs.StringVar(&o.out, "out", ".", "write capacity.json, capacity.svg and capacity.png into `DIR`")
	fs.Var(NewChoice(&o.format, "text", "text", "json"), "format", "report on stdout: text or json (the JSON of capacity.json)")
	fs.BoolVar(&o.wide, "wide", false, "print the steps' table as wide as it is, not fitted to 100 columns (or the terminal's width)")
	addLoadFlags(fs, &o.loadOptions)
	o.po.Duration = plan.CapacityStepTime
	fs.Lookup("timelimit").Usage = "length of each step in seconds (or a duration: 10s)"
	fs.Lookup("timelimit").DefValue = "5"
	fs.Lookup("confirm").DefValue = "5 times -t, at least 30 s"
	fs.Lookup("concurrency").Usage = "open model: the ceiling of requests in flight (the closed model searches it)"
	fs.Lookup("concurrency").DefValue = strconv.Itoa(plan.CapacityCeiling)
	// Bench's flags that a search sets itself or cannot use (refused by
	// plan.CapacityOptions.Build).
	for _, name := range []string{"requests", "rate", "raw", "start-at"} {
		_ = fs.MarkHidden(name)
	}
	return fs
}

// capacityPlan is a validated capacity command: the search and what its
// records leave out.
type capacityPlan struct {
	*plan.Capacity
	privacy stats.Privacy
}

// validateCapacity reads the flags and the URL into the search's options
// and builds it (plan.CapacityOptions.Build); every error is a usage
// error, found before any connection is made.
func validateCapacity(fs *pflag.FlagSet, o *capacityOptions) (*capacityPlan, error) {
	if fs.NArg() != 1 {
		return nil, usagef("capacity: want exactly one URL, got %d (see backbench capacity --help)", fs.NArg())
	}
	res, err := ParseRatio("--resolution", o.resolution)
	if err != nil {
		return nil, err
	}
	co := plan.CapacityOptions{Load: o.planOptions(fs, fs.Arg(0)), Raw: o.rawFile, Model: o.model, Start: o.start, Max: o.max,
		Resolution: res, ResolutionText: o.resolution, Confirm: o.confirm, ConfirmSet: fs.Changed("confirm"),
		MaxTime: o.maxTime, Warmup: o.warmup}
	c, err := co.Build()
	if err != nil {
		return nil, err
	}
	return &capacityPlan{Capacity: c, privacy: o.share.privacy(fs)}, nil
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
	if err := execute.CheckSockets(p.Target, p.Upstreams, stderr); err != nil {
		return &unreachableError{err}
	}
	rep := report.Capacity{Model: o.model, Objectives: p.Config.Objectives, MaxTime: o.maxTime}
	if !o.quiet {
		fmt.Fprintln(stderr, rep.Searching(p.ShownURL(), p.Config.Step, p.Config.Confirm))
		p.Config.OnStep = func(st capacity.Step) { fmt.Fprintln(stderr, rep.StepLine(st)) }
	}
	started := time.Now()
	res, err := p.search(ctx, stderr)
	if err != nil {
		return err
	}
	rep.Result = res
	env := stats.CurrentEnvironment(version())
	rep.Started, rep.Ended, rep.Environment = started, time.Now(), &env
	if err := writeCapacity(&rep, o.out, p.Concurrency); err != nil {
		return err
	}
	if o.format == "json" {
		if err := writeCapacityJSON(stdout, &rep, p.Concurrency); err != nil {
			return err
		}
	} else {
		// The answer stays one line (scripts read it); the table fits.
		fmt.Fprintln(stdout, rep.Answer())
		fmt.Fprintf(stdout, "\n%s\n\n", rep.Heading(p.ShownURL(), p.Concurrency, p.Config.Step, p.Warmup, p.Config.Confirm, time.Since(started)))
		if err := rep.TableFit(stdout, tableWidth(o.wide, stdout)); err != nil {
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
	sched := driver.NewCapacity(ctx, p.Config)
	_, err := driver.Run(ctx, driver.Config{
		Schedule: sched,
		Warmup:   driver.Warmup{Duration: p.Warmup},
		Options:  execute.Options{Stderr: stderr, Quiet: true, Observe: true, Version: version(), Privacy: p.privacy},
	}, []driver.Series{{Label: p.ShownURL(), Plan: p.Plan}})
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
func writeCapacityJSON(w io.Writer, rep *report.Capacity, ceiling int) error {
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

// writeCapacity writes capacity.json and the chart of rep into dir.
func writeCapacity(rep *report.Capacity, dir string, ceiling int) error {
	var pts []report.CapacityPoint
	for _, st := range rep.Result.Steps {
		pts = append(pts, report.CapacityPoint{Load: st.Level, P99Ms: st.P99, Pass: st.Pass})
	}
	bound, xLabel := rep.P99Bound(), rep.LevelAxis()
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
