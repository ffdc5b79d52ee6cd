package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/backend"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/report/page"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/studyfile"
	"github.com/backbench/backbench/internal/studyrun"
)

// studyOptions are the flags of study.
type studyOptions struct {
	out    string
	format string
	quiet  bool
	seed   uint64
	// against is --against, --fail-on and --wide.
	against againstOptions
	noise   string
	// The measurement's overrides (a short try of a long study).
	levels   string
	requests int64
	seconds  time.Duration
	repeat   int
	warmup   int64
	quick    bool
	// Rounds until decided.
	until     string
	budget    time.Duration
	maxRepeat int
	// A capacity study's (a sizing's) own.
	confirm time.Duration
	memory  string
}

const studyUsage = `Usage: backbench study [flags] FILE

Runs the study that FILE (YAML) declares: its question, its factors and
their levels, how to start each backend configuration, and the measurement.
For every configuration it starts the backend (its own process group),
waits until it listens (from the kernel's listening sockets, never an empty
connection), sends one verification request, measures every series in
interleaved rounds, samples the backend's processes, and stops it (SIGTERM,
then SIGKILL after the grace period). Then it compares every pair of series
that differ in exactly one declared factor, and answers the question factor
by factor. It writes DIR/study.json (a document compare and report read)
and DIR/study.html (its page: the answers first, then the charts).

A study file with an unknown key, a bad placeholder or an unknown factor is
refused before anything starts: one line FILE:LINE:COL, exit status 2.
Exit status 0 when every configuration answered; 6 when one failed to
start, listen or verify, was lost during a round, or left processes after
its stop (its files are written all the same, and stderr names the first
failure); 130 or 143 when interrupted.

--against OLD/study.json compares the study, once written, with a saved
run of it (before a change, main's), as backbench compare does: each
series with the same series (the same levels of every factor) of the old
study, at every level and metric. --fail-on RULES is then compare's
regression gate for CI ("req/s slower, p99 higher by 10%"): exit status 4
when one tripped, 5 when some comparison has no verdict to judge.

Flags:
`

func newStudyFlags(o *studyOptions) *pflag.FlagSet {
	fs := newFlagSet("study")
	fs.StringVar(&o.out, "out", ".", "write study.json and study.html into `DIR`")
	fs.Var(NewChoice(&o.format, "text", "text", "json", "markdown"), "format", "report format on stdout: text, json, or markdown (the answers, then a GitHub table per factor, for a pull request)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines on stderr")
	fs.BoolVar(&o.against.wide, "wide", false, "print the text as wide as its lines are, not fitted to 100 columns (or the terminal's width)")
	fs.StringVar(&o.against.against, "against", "", "after the study, compare it with the saved study `OLD/study.json`, as compare does (each series with the same series of the old study)")
	fs.StringVar(&o.against.failOn, "fail-on", "", "with --against, a regression gate: exit status 4 when a verdict of these `RULES` shows (req/s slower, p99 higher by 10%), 5 when some comparison has no verdict")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of the order of the series in each round (0: random; the result records the order's seed)")
	fs.StringVar(&o.noise, "noise", "", "noise threshold `P`: a ratio interval wholly inside 1 ± P is \"same\", wholly outside a direction, else \"undecided\" (2% or 0.02; default: the file's noise, else 2%)")
	fs.StringVarP(&o.levels, "concurrency", "c", "", "replace the file's concurrency levels with `SPEC` (1,4 or 1:500:10)")
	fs.Int64VarP(&o.requests, "requests", "n", 0, "replace the file's requests per level and trial")
	fs.VarP(load.NewSeconds(&o.seconds, 0), "timelimit", "t", "replace the file's time per level and trial (seconds, or a duration)")
	fs.IntVar(&o.repeat, "repeat", 0, "replace the file's trials per level (rounds)")
	fs.Int64Var(&o.warmup, "warmup", -1, "replace the file's warm-up requests before each trial")
	fs.BoolVar(&o.quick, "quick", false, "a try of the whole study in seconds: its first 2 levels, 100 requests a level, 2 rounds, no warm-up (unless -c, -n, -t, --repeat or --warmup say otherwise); too short for verdicts")
	fs.StringVar(&o.until, "until", "", "`decided`: after the first rounds (--repeat, at least 4), run only the series an undecided pair needs, until every pair is decided, the --budget is spent or --max-repeat rounds ran")
	fs.Var(load.NewSeconds(&o.budget, 0), "budget", "with --until decided: the most time the rounds may take (seconds, or a duration: 10m); default: the file's budget, else none")
	fs.IntVar(&o.maxRepeat, "max-repeat", 0, "with --until decided: the most rounds (4 to 100; default: the file's max_repeat, else 20)")
	addSizingFlags(fs, o)
	fs.SortFlags = false
	return fs
}

// addSizingFlags adds the flags of a capacity study (a sizing).
func addSizingFlags(fs *pflag.FlagSet, o *studyOptions) {
	fs.Var(load.NewSeconds(&o.confirm, 0), "confirm", "capacity study: replace the file's confirmation run of each search (seconds, or a duration)")
	fs.StringVar(&o.memory, "memory", "", "capacity study: replace the file's memory budget (`SIZE`: 2GiB, 512MiB)")
}

// overrides are the measurement flags given, as the study's measure
// takes them (studyfile.Measure.Override).
func (o *studyOptions) overrides(fs *pflag.FlagSet) (studyfile.Overrides, error) {
	ov := studyfile.Overrides{Quick: o.quick, Levels: o.levels}
	if fs.Changed("noise") {
		noise, err := ParsePercent("--noise", o.noise)
		if err != nil {
			return ov, err
		}
		ov.Noise = &noise
	}
	if fs.Changed("requests") {
		ov.Requests = &o.requests
	}
	if fs.Changed("timelimit") {
		ov.Duration = &o.seconds
	}
	if fs.Changed("repeat") {
		ov.Repeat = &o.repeat
	}
	if fs.Changed("warmup") {
		ov.Warmup = &o.warmup
	}
	if fs.Changed("until") {
		ov.Until = &o.until
	}
	if fs.Changed("budget") {
		ov.Budget = &o.budget
	}
	if fs.Changed("max-repeat") {
		ov.MaxRepeat = &o.maxRepeat
	}
	if fs.Changed("confirm") {
		ov.Confirm = &o.confirm
	}
	if fs.Changed("memory") {
		ov.Memory = &o.memory
	}
	return ov, nil
}

func studyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o studyOptions
	fs := newStudyFlags(&o)
	if err := parseFlags(fs, studyUsage, args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want one study FILE, got %d arguments", fs.NArg())
	}
	ov, err := o.overrides(fs)
	if err != nil {
		return err
	}
	// The saved study to compare with is read before anything starts;
	// its noise is the study's, known after the run.
	against, err := validateAgainst(fs, &o.against, 0)
	if err != nil {
		return err
	}
	if against != nil && against.base.Kind() != document.KindStudy {
		return usagef("--against: %s is a %s result, not a study.json: a study compares with a study (compare the others with backbench compare)", o.against.against, against.base.Kind())
	}
	st, err := studyfile.Load(fs.Arg(0))
	if err != nil {
		return usagef("%v", err)
	}
	if err := st.Measure.Override(ov); err != nil {
		return usagef("%v", err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return usagef("study: cannot create --out directory: %v", err)
	}
	// Off a terminal, one line per event (a backend started, verified,
	// lost or stopped; a round begun, with its estimated end); on one,
	// also a live line under them (round, configuration and series,
	// requests done, the estimated end); -q: none.
	var log io.Writer
	var live *LiveWriter
	var cur atomic.Pointer[studyrun.Progress]
	if !o.quiet {
		log = stderr
		if isTerminal(stderr) {
			live = NewLiveWriter(stderr)
			log, stderr = live, live
		}
	}
	stopLeftovers(stderr)
	if w, err := backend.StartWatcher(selfPath()); err != nil {
		fmt.Fprintf(stderr, "backbench study: warning: %v; the backends will not be stopped if backbench is killed\n", err)
	} else {
		// The last thing done: after the runner has stopped every
		// backend and removed its directory.
		defer w.Close()
	}
	ro := studyrun.Options{
		Exec:   execute.Options{Stderr: stderr, Quiet: true, Version: version()},
		Log:    log,
		Seed:   o.seed,
		Redact: func(a []string) []string { return load.RedactArgs(a, "") },
		Self:   selfPath(),
	}
	endLive := func(*study.Result) {}
	if live != nil {
		ro.Progress = func(p studyrun.Progress) { cur.Store(&p) }
		stop := StartLiveLine(live, func() string {
			if p := cur.Load(); p != nil {
				return "study: " + p.String()
			}
			return ""
		})
		begun := time.Now()
		endLive = func(res *study.Result) {
			stop()
			// The line ends somewhere: where the study ended, on a line
			// of its own.
			if res != nil {
				fmt.Fprintf(live, "study: ended at %s: %d of %d rounds in %s\n", studyrun.Clock(time.Now()), res.Rounds, res.Measure.Repeat, time.Since(begun).Round(time.Second))
			}
		}
	}
	res, err := studyrun.Run(ctx, st, ro)
	endLive(res)
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			return err
		}
		return usagef("%v", err)
	}
	doc := &document.Study{Result: res}
	var files []*report.AtomicFile
	for _, n := range []string{"study.json", "study.html"} {
		f, err := report.CreateAtomic(filepath.Join(o.out, n))
		if err != nil {
			return usagef("study: cannot create output file: %v", err)
		}
		defer f.Abort()
		files = append(files, f)
	}
	if err := document.Write(files[0], doc); err != nil {
		return err
	}
	if err := page.WriteOwn(files[1], doc, files[0].Name(), "study", false); err != nil {
		return err
	}
	if err := report.CommitAll(files); err != nil {
		return err
	}
	switch o.format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	case "markdown":
		if err := report.StudyMarkdown(stdout, doc, commandLine("study", args, stats.Privacy{})); err != nil {
			return err
		}
	default:
		if err := report.StudyText(stdout, res, tableWidth(o.against.wide, stdout)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nWrote %s, %s\n", files[0].Name(), files[1].Name())
	}
	if res.Incomplete {
		return errInterrupted
	}
	// The check against the saved study takes the study as its
	// study.json, just written, reads (compare.Against), as compare
	// would; a failed configuration (exit status 6) outranks the gate.
	var gateErr error
	if against != nil {
		against.noise = res.Noise
		gateErr = against.check(stdout, o.format, files[0].Name(), doc)
	}
	if whys := res.FailedConfigurations(); len(whys) > 0 {
		e := &studyFailedError{whys: whys, total: len(res.Configurations)}
		if !o.quiet {
			// Each failure was said once, in full, by the progress lines.
			for _, c := range res.Configurations {
				if c.Failed() {
					e.names = append(e.names, c.Name)
				}
			}
		}
		return e
	}
	return gateErr
}

// stopLeftovers stops and removes what earlier studies that were killed
// left (their watcher killed too: a whole container or session killed,
// an OOM kill of both), and names it in one line each on stderr: the
// processes that carry such a run's marker, the run being dead, and its
// directories in the temporary directory. Nothing else is touched.
func stopLeftovers(stderr io.Writer) {
	ls, err := backend.FindLeftovers(os.TempDir(), studyrun.DirPrefix)
	if err != nil {
		return
	}
	for _, l := range ls {
		line := l.String()
		rep, err := l.Stop()
		switch {
		case len(rep.Left) > 0:
			line += fmt.Sprintf("; could not stop pids %s (stop them with: kill -KILL %s)", joinPIDs(rep.Left), joinPIDs(rep.Left))
		case len(rep.PIDs) > 0 && rep.Killed:
			line += "; stopped them (SIGKILL needed)"
		case len(rep.PIDs) > 0:
			line += "; stopped them"
		}
		if len(l.Dirs) > 0 {
			if err != nil {
				line += fmt.Sprintf("; could not remove a directory: %v", err)
			} else {
				line += "; removed the directories"
			}
		}
		fmt.Fprintf(stderr, "backbench study: %s\n", line)
	}
}

// joinPIDs joins PIDs with spaces.
func joinPIDs(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, " ")
}

// selfPath is the running backbench's executable ("" if unknown), which a
// study runs for a backend command named "backbench".
func selfPath() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}
