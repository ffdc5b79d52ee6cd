package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/sweep"
)

// sweepOptions are the flags of sweep: bench's load flags, except that -c
// takes a list of levels; --keepalive-modes runs series with and without
// keep-alive.
type sweepOptions struct {
	loadOptions
	levels   string
	out      string
	kaModes  string // "", or a list of on and off ("both": off,on)
	stopRate string
	warmup   int64
	// backendPIDs and backendPIDFiles are sweep's --backend-pid and
	// --backend-pidfile: [LABEL=]PID and [LABEL=]FILE.
	backendPIDs, backendPIDFiles []string
	format                       string
	repeatOptions
	againstOptions
}

const sweepUsage = `Usage: backbench sweep [flags] --concurrency SPEC [--out DIR] [LABEL=]URL...

Runs the same load against every URL (a series each) at every concurrency
level, levels interleaved (level 1 of every series, then the next level...),
with a short warm-up before each level that is not counted. Prints a table
(req/s, p99 ms, failed per series and level) and writes DIR/sweep.csv,
DIR/sweep.json, DIR/sweep.svg and DIR/sweep.png (requests/sec and p99
latency against concurrency, two panels in one image, a third for the
failure ratio when any level failed), and DIR/sweep.html (the page of
backbench report for this sweep). With a mix (--targets, --access-log),
a table per series of its targets at each level follows the table, and
DIR/sweep-targets.csv has a row per series, level and target.

SPEC: start:end:step (1:500:10 runs 1, 11, ... 491, 500) or a list (1,2,4,8),
or both (1,2,10:100:10). -n is the number of requests per level, -t the time
per level.

With --repeat N (or --precision P), every series runs N trials at every
level in interleaved rounds; the table gives medians with their
intervals (95% from 6 trials; the trials' range below, 93.75% for 5)
and every series' req/s verdict against --baseline, and a comparisons
table follows: the pairs of series that differ in one factor
(transport, keep-alive, protocol, HTTP version, TLS, upstreams, backend),
grouped by factor. One LABEL on several URLs names one backend reached
several ways (serial=fcgi://127.0.0.1:9000/ serial=fcgi://unix:/s.sock:/);
a LABEL of its own on every URL names the ways instead (t=URL1 u=URL2:
transport at each keep-alive mode), unless the URLs differ in protocol.
Backends that differ in more than the backend
(fcgi=fcgi://... starman=http://...) are compared as deployments, the
other differences named. A series whose every request failed gets no
verdict; a note says why.

With --until decided, the rounds are not fixed: at every level, after the
first rounds (--repeat, default and at least 4) every round runs only the
series that an undecided pair still needs (interleaved and shuffled as
ever), until every pair is decided, --budget is spent or --max-repeat
rounds ran (default 20); the verdicts are the sequential rule's, their
intervals of its confidence, and a note says why the rounds ended.

Flags:
`

// newSweepFlags builds sweep's flags: the load flags of bench (shared with
// addLoadFlags), minus -c, which sweep redefines.
func newSweepFlags(o *sweepOptions) *pflag.FlagSet {
	fs := newFlagSet("sweep")
	fs.SortFlags = false
	fs.StringVarP(&o.levels, "concurrency", "c", "", "concurrency levels `SPEC`: start:end:step (1:500:10) or a list (1,2,4,8); required")
	fs.Var(NewChoice(&o.format, "text", "text", "markdown"), "format", "stdout: text (the table) or markdown (the answers and a GitHub table, for a pull request); the files are written either way")
	fs.StringVar(&o.out, "out", ".", "write sweep.csv, sweep.json, sweep.svg, sweep.png and sweep.html into `DIR`")
	fs.StringVar(&o.kaModes, "keepalive-modes", "", "run every series with these keep-alive `MODES`: on, off, or on,off (every series twice, also spelt both); default: as -k says")
	fs.StringVar(&o.stopRate, "stop-error-rate", "", "stop a series after a level whose failure ratio passes `R` (0 to 1, or a percentage like 5%)")
	fs.Int64Var(&o.warmup, "warmup", 0, "`N` warm-up requests before each level, not counted (default: a tenth of -n, at least 1; with -t alone a tenth of -t; 0: none)")
	load := newFlagSet("load")
	load.SortFlags = false
	addLoadFlags(load, &o.loadOptions)
	// Only the load flags that sweep honours: -c is redefined above; bench's open model (--rate), --ab-compat and --raw
	// are not part of a sweep.
	shared := map[string]bool{"requests": true, "keepalive": true, "timelimit": true, "timeout": true, "header": true,
		"method": true, "postfile": true, "content-type": true, "variable-length": true, "quiet": true,
		"verbosity": true, "http1.0": true, "document-root": true, "param": true, "unix-socket": true,
		"upstream": true, "balance": true, "insecure": true, "fpm-status": true,
		"client-sched": true, "client-cpus": true, "threads": true, "engine": true, "slo": true, "start-at": true,
		"putfile": true, "head": true, "cookie": true, "basic-auth": true, "proxy": true,
		"keep-secrets": true, "no-hostname": true,
		"targets": true, "access-log": true, "log-format": true, "replay-methods": true}
	load.VisitAll(func(f *pflag.Flag) {
		if !shared[f.Name] {
			return
		}
		switch f.Name {
		case "requests":
			f.Usage = "requests per level"
			f.DefValue = "1000"
		case "timelimit":
			f.Usage = "time limit of each level in seconds (or a duration: 10s); with -n too, whichever comes first"
		case "start-at":
			f.Usage = "set up, then start the first level (its warm-up first) at TIME (RFC 3339 or Unix seconds)"
		}
		fs.AddFlag(f)
	})
	fs.StringArrayVar(&o.backendPIDs, "backend-pid", nil, "sample this backend process and its descendants during every level: `[LABEL=]PID` (LABEL=: that series' only, the LABEL of LABEL=URL; bare: every series; repeatable)")
	fs.StringArrayVar(&o.backendPIDFiles, "backend-pidfile", nil, "like --backend-pid, the PID read from a file: `[LABEL=]FILE`")
	addRepeatFlags(fs, &o.repeatOptions, true)
	addAgainstFlags(fs, &o.againstOptions)
	o.po.Requests = 1000
	return fs
}

// sweepPlan is a validated sweep: its series and configuration, with its
// trials and its gate.
type sweepPlan struct {
	*plan.Sweep
	trials trialPlan
	// against is --against's saved baseline and --fail-on's gate (nil
	// without --against).
	against *againstPlan
}

// validateSweep reads the flags and URLs into the sweep's options and
// builds it (plan.SweepOptions.Build); every error is a usage error, found
// before any connection is made.
func validateSweep(fs *pflag.FlagSet, o *sweepOptions) (*sweepPlan, error) {
	if fs.NArg() == 0 {
		return nil, usagef("sweep: want at least one URL (see backbench sweep --help)")
	}
	so := plan.SweepOptions{Load: o.planOptions(fs, ""), Args: fs.Args(), KeepAliveModes: o.kaModes, Levels: o.levels,
		BackendPIDs: o.backendPIDs, BackendPIDFiles: o.backendPIDFiles, Warmup: o.warmup, WarmupSet: fs.Changed("warmup"),
		StopOnErrors: o.stopRate != "", Baseline: o.baseline}
	if o.stopRate != "" {
		r, err := ParseRatio("--stop-error-rate", o.stopRate)
		if err != nil {
			return nil, err
		}
		so.StopErrorRate = r
	}
	p := &sweepPlan{}
	var err error
	if p.trials, err = validateRepeat(fs, &o.repeatOptions); err != nil {
		return nil, err
	}
	if p.against, err = validateAgainst(fs, &o.againstOptions, p.trials.noise); err != nil {
		return nil, err
	}
	if p.Sweep, err = so.Build(); err != nil {
		return nil, err
	}
	if p.trials.plan.Until != "" {
		// Rounds until decided look at the pairs the comparisons will
		// make: without one there is nothing to decide.
		p.trials.plan.Pairs = sweep.PlanPairs(p.Series, p.Backends, p.Baseline)
		if len(p.trials.plan.Pairs) == 0 {
			return nil, usagef("sweep: --until decided decides pairs of series that differ in one factor, and these series make none: give several URLs (of one backend reached several ways, or several backends) or --keepalive-modes off,on")
		}
	}
	return p, nil
}

func sweepCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o sweepOptions
	fs := newSweepFlags(&o)
	if err := parseFlags(fs, sweepUsage, args, stdout); err != nil {
		return err
	}
	p, err := validateSweep(fs, &o)
	if err != nil {
		return err
	}
	// Make --out before any connection, so that a bad path costs nothing;
	// the files are created once a target has answered.
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return usagef("sweep: cannot create --out directory: %v", err)
	}
	// The design is judged once every flag is known good, before the
	// first request.
	p.trials.warnDesign(stderr)
	setup := p.Config.Prepare(p.Series, o.quiet, stderr)
	defer setup.Done()
	errs, all := sweep.CheckSockets(p.Series)
	if all {
		return &unreachableError{errors.Join(errs...)}
	}
	for _, err := range errs {
		fmt.Fprintf(stderr, "backbench: warning: %v (the series runs; its failures are in the report)\n", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.Config.Options = execute.Options{Stderr: stderr, Quiet: o.quiet, Verbosity: o.po.Verbosity, Setup: setup, Version: version(),
		Privacy: o.share.privacy(fs)}

	AnnounceStart(stderr, o.po.StartAt, o.quiet)
	execute.WaitUntil(ctx, o.po.StartAt)
	stop := func(bool) {}
	switch {
	case o.quiet:
	case isTerminal(stderr):
		erase := StartSweepProgress(&p.Config, stderr)
		stop = func(bool) { erase() }
	default:
		// Piped or redirected: no live line, one line per finished level,
		// so that a long sweep is seen to progress (bench prints ab's
		// "Completed N requests").
		stop = StartSweepLines(&p.Config, stderr)
	}
	var short sweep.ShortTrials
	if p.trials.on {
		p.Config.Trials = &p.trials.plan
		p.Config.OnTrial = func(t driver.Trial) { short.Add(p.Series[t.Series].Label, t.Summary) }
	}
	res, err := sweep.Run(ctx, p.Config, p.Series)
	notes := res.Notes
	if n := short.Note(); n != "" {
		notes = append(notes, n)
	}
	stop(err == nil && !res.Interrupted)
	if err != nil {
		return executeError(err)
	}
	if errs, all = sweep.Unreachable(res, p.Series); all {
		return &unreachableError{errors.Join(errs...)}
	}
	for _, err := range errs {
		fmt.Fprintf(stderr, "backbench: warning: %v (the series stopped)\n", err)
	}
	judged := sweep.Judge(res.Series, p.Objectives)
	sw := p.Config.Document(p.Series, p.Backends, res)
	names := []string{"sweep.csv", "sweep.json", "sweep.svg", "sweep.png", "sweep.html"}
	if report.SweepHasTargets(&sw) {
		names = append(names, report.SweepTargetsFile)
	}
	// Every file is written whole to a temporary file, then all are
	// renamed into place: a failed write leaves the previous sweep's.
	files := make([]*report.AtomicFile, len(names))
	for i, n := range names {
		f, err := report.CreateAtomic(filepath.Join(o.out, n))
		if err != nil {
			return usagef("sweep: cannot create output file: %v", err)
		}
		defer f.Abort()
		files[i] = f
	}
	judged.Mark(&sw)
	var sloErr error
	if judged.Failed != nil {
		sloErr = &sloError{judged.Failed}
	}
	if p.trials.on {
		sw.SweepTrials = sweep.TrialsDocument(p.trials.plan, p.trials.noise, p.Baseline, res.Series, p.Backends, notes, res.Until)
	}
	markdown := o.format == "markdown"
	if markdown {
		// Markdown alone on stdout, to be pasted or saved whole.
		if err := report.SweepMarkdown(stdout, &sw, commandLine("sweep", args, p.Config.Options.Privacy)); err != nil {
			return err
		}
	} else {
		width := tableWidth(o.wide, stdout)
		fmt.Fprintln(stdout, report.Wrap(report.SweepTitle(&sw), width, "  "))
		if p.trials.on {
			fmt.Fprintln(stdout, report.Wrap(p.trials.plan.Describe(true), width, "  "))
		}
		fmt.Fprintln(stdout)
		if err := report.SweepTableFit(stdout, &sw, width); err != nil {
			return err
		}
		if err := report.Comparisons(stdout, sw.SweepTrials, width); err != nil {
			return err
		}
		for _, l := range judged.Lines {
			fmt.Fprintln(stdout, report.Wrap(l, width, "    "))
		}
	}
	writers := []func(io.Writer) error{
		func(w io.Writer) error { return report.SweepCSV(w, &sw) },
		func(w io.Writer) error {
			return document.Write(w, &sw)
		},
		func(w io.Writer) error { return report.SweepChart(w, &sw, "svg") },
		func(w io.Writer) error { return report.SweepChart(w, &sw, "png") },
		func(w io.Writer) error { return sweepPage(w, &sw, files[1].Name(), o.share.keepSecrets) },
		func(w io.Writer) error { return report.SweepTargetsCSV(w, &sw) },
	}
	for i, f := range files {
		if err := writers[i](f); err != nil {
			return fmt.Errorf("writing %s: %w", files[i].Name(), err)
		}
	}
	if err := report.CommitAll(files); err != nil {
		return err
	}
	if !report.SweepHasTargets(&sw) {
		// A sweep of one request leaves no per-target file of an earlier
		// sweep of a mix beside its own files.
		if err := os.Remove(filepath.Join(o.out, report.SweepTargetsFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	wrote := stdout
	if markdown {
		wrote = io.Discard
	}
	fmt.Fprintf(wrote, "\n%s\n", report.Wrap("Wrote "+strings.Join(func() []string {
		out := make([]string, len(files))
		for i, f := range files {
			out[i] = f.Name()
		}
		return out
	}(), ", "), tableWidth(o.wide, stdout), "  "))
	if res.Interrupted {
		return errInterrupted
	}
	// The check against a saved baseline takes the sweep as its
	// sweep.json, just written, reads (compare.Against), as compare
	// would; an objective that failed (exit status 3) outranks the gate.
	gateErr := p.against.check(stdout, o.format, files[1].Name(), &sw)
	if sloErr != nil {
		return sloErr
	}
	return gateErr
}
