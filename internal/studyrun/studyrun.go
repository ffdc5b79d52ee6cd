// Package studyrun runs a study (internal/studyfile): it starts every
// backend configuration (internal/backend), waits until it listens,
// verifies it with one request, measures its series through the one driver
// (internal/driver) in interleaved rounds, samples its process tree, stops
// it, and returns the study's result (internal/study), answers included.
//
// Configurations that can run side by side (each on its own address) are
// started once and measured together, round after round, in an order
// shuffled per round; an exclusive one (a fixed port, or marked so) is
// started, measured and stopped in every round, alone, and the notes say
// so. A configuration that does not start, does not listen, fails its
// verification or is lost mid-run is reported in one line, and its series
// get no verdict; a configuration lost during a round has that round's runs
// dropped and is restarted once, then stopped for good.
//
// A capacity study (measure kind capacity) sizes a pool instead: each
// configuration runs alone, started, verified, searched (the open-model
// capacity search of internal/capacity, its confirmation included) and
// stopped in every round, with its tree's per-process PSS read during
// every step; the answer is the sizing (study.Sizing).
//
// Limits: a sweep or a bench is a closed-model run at each level.
package studyrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/backend"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/studyfile"
	"github.com/backbench/backbench/internal/trials"
)

// DirPrefix begins the name of the directory a study's configurations
// get in the system's temporary directory (their sockets, files and
// working directories): "bbst", then random digits.
const DirPrefix = "bbst"

// DefaultNoise is the threshold under which a difference does not count
// when the study file sets none: 2%, as sweep's.
const DefaultNoise = 0.02

// Options configure Run.
type Options struct {
	// Exec are the executor's options of every measured run (Stderr,
	// Version, Privacy); Observe is set by Run.
	Exec execute.Options
	// Log, if not nil, gets one line per event: a configuration started,
	// verified, lost or stopped; a round begun.
	Log io.Writer
	// Seed orders the series in every round (0: the clock's).
	Seed uint64
	// Noise overrides the study file's noise threshold when above 0.
	Noise float64
	// Redact hides credentials in the command lines kept in the result.
	Redact func([]string) []string
	// Progress, if not nil, is called at the start of every round and of
	// every run (warm-up or measured) of a sweep or bench study, for a
	// live line; from the goroutine that runs the study.
	Progress func(Progress)
	// Self, when not "", is the program run for a backend command named
	// "backbench" (the seeds' `backbench serve`): the running backbench,
	// whether or not it is on PATH.
	Self string
}

// Target is a series' request, its placeholders expanded.
type Target struct {
	// URL is the series' URL; DocumentRoot FastCGI's DOCUMENT_ROOT ("":
	// the default); Headers the backend's request headers.
	URL          string
	DocumentRoot string
	Headers      []string
}

// config is a configuration while the study runs.
type config struct {
	sc      *studyfile.Configuration
	res     *study.Configuration
	dir     string
	argv    []string
	env     []string
	network string
	addr    string
	series  []int
	files   []written // the files the study wrote for it
	proc    *backend.Process
	dead    bool // no more measurement: failed, or lost twice
	// said holds the failure lines already written to the log: each is
	// said once.
	said map[string]bool
	// pss sums the mean PSS of its measured runs, for the mean.
	pssSum float64
	pssN   int
}

// written is a file the study wrote for a configuration: its path and
// its text.
type written struct{ path, content string }

// runner holds a study's state.
type runner struct {
	st      *studyfile.Study
	o       Options
	res     *study.Result
	configs []*config
	// series holds each series' state, in the order of res.Series.
	series []*seriesRun
	// rounds is the number of rounds every series runs (until decided:
	// the first ones), once defaulted: the result's Measure.Repeat.
	rounds int
	rng    *rand.Rand
	// prog is where the rounds stand, for Options.Progress and the
	// rounds' lines.
	prog progress
}

// seriesRun is one series' state as the rounds go: its plan, and its kept
// trials at each of the measure's levels.
type seriesRun struct {
	plan   *execute.Plan
	levels []levelRun
}

// levelRun is a series' kept trials at one level: their summaries, in the
// order of the rounds, and how many there were when the round began (mark:
// a lost configuration's runs of the round are dropped back to it).
type levelRun struct {
	trials []*stats.Summary
	mark   int
}

// Run runs the study st: it starts every configuration, verifies it,
// measures its series in rounds, stops it, and answers. It returns an
// error only when the study cannot begin (a plan refused, no directory);
// a backend's failures are in the result. When ctx is cancelled, every
// backend is stopped and the result is marked incomplete.
func Run(ctx context.Context, st *studyfile.Study, o Options) (*study.Result, error) {
	start := time.Now()
	base, err := os.MkdirTemp("", DirPrefix)
	if err != nil {
		return nil, fmt.Errorf("study: %w", err)
	}
	// Marked as this run's, and told to the watcher (if one runs), so
	// that it goes even when backbench is killed.
	if err := backend.ClaimDir(base); err != nil {
		os.RemoveAll(base)
		return nil, fmt.Errorf("study: %w", err)
	}
	seed := o.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	r := &runner{st: st, o: o, rng: rand.New(rand.NewPCG(seed, seed>>1|1))}
	defer r.cleanup(base)
	r.rounds = max(st.Measure.Repeat, 1)
	r.res = &study.Result{Declaration: st.Declaration, Noise: DefaultNoise, StartedAt: unixSeconds(start),
		Measure: study.Measure{Kind: st.Measure.Kind, Levels: st.Measure.Levels, Requests: st.Measure.Requests,
			Seconds: st.Measure.Duration.Seconds(), Warmup: st.Measure.Warmup}}
	if st.Measure.Until == studyfile.UntilDecided && st.Measure.Kind != studyfile.MeasureCapacity {
		me := &r.res.Measure
		me.Until, me.BudgetSeconds = study.UntilDecided, st.Measure.Budget.Seconds()
		r.rounds, me.MaxRepeat = st.Measure.UntilRounds()
	}
	r.res.Measure.Repeat = r.rounds
	if st.Measure.NoiseSet {
		r.res.Noise = st.Measure.Noise
	}
	if o.Noise > 0 {
		r.res.Noise = o.Noise
	}
	r.res.Seed = seed
	if err := r.prepare(base); err != nil {
		return nil, err
	}
	if r.o.Exec.Setup == nil && len(r.series) > 0 {
		// One setup for the whole study: the file limit for the highest
		// level, the client's scheduling policy and thread cap.
		top := r.ceiling()
		setup := execute.Prepare(r.series[0].plan, top, true, r.o.Exec.Stderr)
		defer setup.Done()
		r.o.Exec.Setup = setup
	}
	r.pinning()
	defer r.stopAll()
	if st.Measure.Kind == studyfile.MeasureCapacity {
		r.measureCapacity(ctx)
		r.stopAll()
		r.finishCapacity()
		r.ended(start)
		return r.res, nil
	}
	if n := trials.MinTrialsForVerdict(); r.rounds < n {
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("%d trials a series and level: a verdict needs %d a side (set repeat: %d), so the comparisons give ratios without verdicts", r.rounds, n, n))
		r.logf("%s", r.res.Notes[len(r.res.Notes)-1])
	}
	r.measure(ctx)
	r.stopAll()
	r.finish()
	r.ended(start)
	return r.res, nil
}

// ended records the study's end and wall time, from start.
func (r *runner) ended(start time.Time) {
	now := time.Now()
	r.res.Seconds, r.res.EndedAt = now.Sub(start).Seconds(), unixSeconds(now)
}

// unixSeconds is t in Unix seconds, with its fraction.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// pinning records what was pinned (the client's CPUs as set, each
// configuration's CPUs) and notes when nothing was, or when the client's
// CPUs could not be set.
func (r *runner) pinning() {
	me := &r.res.Measure
	me.Pin = r.st.Measure.Pin
	if su := r.o.Exec.Setup; su != nil {
		me.ClientCPUs = su.CPUs
		if su.PinError != nil {
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("the client's CPUs (client_cpus) could not be set, the client ran unpinned: %v", su.PinError))
		}
	}
	backends := false
	for _, c := range r.configs {
		c.res.CPUs = c.sc.Backend.CPUs
		backends = backends || len(c.res.CPUs) > 0
	}
	switch {
	case r.st.Measure.PinNote != "":
		r.res.Notes = append(r.res.Notes, r.st.Measure.PinNote)
	case len(me.ClientCPUs) == 0 && !backends:
		r.res.Notes = append(r.res.Notes, "nothing was pinned: the client and the backends shared the CPUs, and their contention is part of the spread (pin: auto keeps them apart)")
	}
	for _, n := range r.res.Notes {
		r.logf("%s", n)
	}
}

// logf writes one line of the study's progress.
func (r *runner) logf(format string, a ...any) {
	if r.o.Log != nil {
		fmt.Fprintf(r.o.Log, "study: "+format+"\n", a...)
	}
}

// prepare picks every configuration's address, expands its command, env,
// files and URLs, and makes the plan of every series.
func (r *runner) prepare(base string) error {
	cs := r.st.Configurations()
	series := r.st.Series(cs)
	for i := range cs {
		sc := &cs[i]
		b := sc.Backend
		c := &config{sc: sc, dir: filepath.Join(base, fmt.Sprintf("c%d", i+1)), network: sc.Transport}
		if err := os.Mkdir(c.dir, 0o755); err != nil {
			return fmt.Errorf("study: %w", err)
		}
		var err error
		if b.Port > 0 {
			c.addr = fmt.Sprintf("127.0.0.1:%d", b.Port)
		} else if c.addr, err = backend.PickAddr(c.network, c.dir, "b"); err != nil {
			return fmt.Errorf("study: %s: %w", sc.Name, err)
		}
		vars := sc.Vars(c.network, c.addr, c.dir)
		for _, a := range b.Command {
			v, err := studyfile.Expand(a, vars)
			if err != nil {
				return fmt.Errorf("study: %s: %w", sc.Name, err)
			}
			c.argv = append(c.argv, v)
		}
		for _, kv := range b.Env {
			v, err := studyfile.Expand(kv[1], vars)
			if err != nil {
				return fmt.Errorf("study: %s: %w", sc.Name, err)
			}
			c.env = append(c.env, kv[0]+"="+v)
		}
		for _, f := range b.Files {
			p, err := studyfile.Expand(f.Path, vars)
			if err != nil {
				return fmt.Errorf("study: %s: %w", sc.Name, err)
			}
			body, err := studyfile.Expand(f.Content, vars)
			if err != nil {
				return fmt.Errorf("study: %s: %w", sc.Name, err)
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(c.dir, p)
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return fmt.Errorf("study: %s: %w", sc.Name, err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				return fmt.Errorf("study: %s: %w", sc.Name, err)
			}
			c.files = append(c.files, written{p, body})
		}
		cmd := slices.Clone(c.argv)
		if r.o.Redact != nil {
			cmd = r.o.Redact(cmd)
		}
		if c.argv[0] == "backbench" && r.o.Self != "" {
			c.argv[0] = r.o.Self
		}
		r.res.Configurations = append(r.res.Configurations, study.Configuration{Name: sc.Name, Levels: sc.Levels,
			Backend: b.Name, Command: cmd, Network: c.network, Address: c.addr,
			Exclusive: b.Exclusive || b.Port > 0})
		r.configs = append(r.configs, c)
	}
	for i := range r.configs {
		r.configs[i].res = &r.res.Configurations[i]
	}
	var err error
	for si := range series {
		s := &series[si]
		ci := slices.IndexFunc(cs, func(c studyfile.Configuration) bool { return c.Name == s.Config.Name })
		c := r.configs[ci]
		vars := c.sc.Vars(c.network, c.addr, c.dir)
		for k, v := range s.Levels {
			vars[k] = v
		}
		var t Target
		expand := func(in string) string {
			out, e := studyfile.Expand(in, vars)
			if e != nil && err == nil {
				err = e
			}
			return out
		}
		b := c.sc.Backend
		t.URL, t.DocumentRoot = expand(b.URL), expand(b.DocumentRoot)
		for _, h := range b.Headers {
			t.Headers = append(t.Headers, expand(h))
		}
		if err != nil {
			return fmt.Errorf("study: %s: %w", s.Label, err)
		}
		plan, err := seriesPlan(r.st, s, t)
		if err != nil {
			return fmt.Errorf("study: series %s: %w", s.Label, err)
		}
		u := plan.ShownURL()
		if len(c.series) == 0 {
			// The protocol as the report's Protocol line names it
			// ("FastCGI (RESPONDER)", "HTTP/1.1"), its first word.
			c.res.Protocol = plan.Target.Scheme
			name, _, _ := strings.Cut(plan.Record().Wire.Protocol, " ")
			name, _, _ = strings.Cut(name, "/")
			if plan.TLS != nil {
				name += "S"
			}
			c.res.ProtocolName = name
		}
		c.series = append(c.series, si)
		r.series = append(r.series, &seriesRun{plan: plan, levels: make([]levelRun, len(r.st.Measure.Levels))})
		r.res.Series = append(r.res.Series, study.Series{Label: s.Label, Config: ci, Levels: s.Levels, URL: u,
			KeepAlive: plan.KeepAlive, HTTP10: s.Levels[study.FactorHTTP] == "1.0"})
	}
	return nil
}

// exclusive reports whether c runs alone.
func (c *config) exclusive() bool { return c.res.Exclusive }

// fail marks c as failed for the rest of the study: msg is the failure's
// line, which the log gets once.
func (r *runner) fail(c *config, kind, msg string) {
	c.dead = true
	if c.res.Failure == "" {
		c.res.Failure, c.res.FailureKind = msg, kind
	}
	r.say(c, msg)
}

// say writes c's line msg to the log, unless it was said already.
func (r *runner) say(c *config, msg string) {
	if c.said == nil {
		c.said = map[string]bool{}
	}
	if !c.said[msg] {
		c.said[msg] = true
		r.logf("%s: %s", c.res.Name, msg)
	}
}

// cleanup removes the study's directory base, but for the directories of
// the configurations that failed (study.Configuration.Failed): these are
// kept where they are, the paths their files name still true, and base
// with them, unmarked, so that no later run takes it for a killed run's
// leftover.
func (r *runner) cleanup(base string) {
	keep := false
	for _, c := range r.configs {
		if c.res != nil && c.res.Failed() {
			keep = true
		}
	}
	if !keep {
		backend.ReleaseDir(base)
		return
	}
	for _, c := range r.configs {
		if c.res == nil || !c.res.Failed() {
			os.RemoveAll(c.dir)
		}
	}
	backend.KeepDir(base)
}

// start starts c, waits until it listens and verifies it; on failure c is
// marked (fail) and false returned.
func (r *runner) start(ctx context.Context, c *config) bool {
	b := c.sc.Backend
	p, err := backend.Start(ctx, backend.Spec{Name: c.res.Name, Argv: c.argv, Env: c.env, Dir: c.dir,
		Network: c.network, Addr: c.addr, StartTimeout: b.StartTimeout, Grace: b.Grace, StopSignal: b.StopSignal,
		CPUs: b.CPUs})
	c.res.Starts++
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		kind := study.FailStart
		head, out := err.Error(), []string(nil)
		var se *backend.StartError
		if errors.As(err, &se) {
			if se.Kind == backend.KindNeverListened {
				kind = study.FailListen
			}
			head = se.Head()
			if se.Kind == backend.KindExited || se.Kind == backend.KindNeverListened {
				out = se.Tail
				if len(out) == 0 && se.Kind == backend.KindExited {
					head += ", with no output"
				}
			}
		}
		r.fail(c, kind, r.why(c, head, out))
		return false
	}
	c.proc = p
	for _, si := range c.series {
		r.series[si].plan.BackendPIDs = []int{p.PID()}
	}
	r.logf("%s: started (pid %d), listening on %s %s", c.res.Name, p.PID(), c.network, c.addr)
	if msg := r.verify(ctx, c); msg != "" {
		out := p.Tail(tailLines)
		r.stop(c)
		if ctx.Err() == nil {
			r.fail(c, study.FailVerify, r.why(c, fmt.Sprintf("backend %q failed its verification request: %s", c.res.Name, msg), out))
		}
		return false
	}
	r.logf("%s: verified", c.res.Name)
	return true
}

// verify sends one request of c's first series and checks the status and
// body the study expects; it returns what went wrong ("" if nothing).
func (r *runner) verify(ctx context.Context, c *config) string {
	plan := r.series[c.series[0]].plan
	proto, err := plan.Protocol()
	if err != nil {
		return err.Error()
	}
	f, ok := proto.(protocol.Fetcher)
	if !ok {
		return ""
	}
	req := plan.Request(nil)
	req.KeepAlive = false
	if req.Timeout <= 0 || req.Timeout > 10*time.Second {
		req.Timeout = 10 * time.Second
	}
	status, body, err := f.Fetch(ctx, req, plan.ProtoOptions)
	v := c.sc.Backend.Verify
	want := v.Status
	if want == 0 {
		want = 200
	}
	switch {
	case err != nil:
		return err.Error()
	case status != want:
		msg := fmt.Sprintf("status %d, want %d", status, want)
		if b := bodyStart(body); b != "" {
			msg += fmt.Sprintf("; the body begins %q", b)
		} else {
			msg += "; the body is empty"
		}
		script, scripted := "", false
		if sn, ok := proto.(protocol.ScriptNamer); ok {
			script, scripted = sn.ScriptFilename(req, plan.ProtoOptions), true
		}
		if h := verifyHint(scripted, status, r.res.Series[c.series[0]].URL, script); h != "" {
			msg += "; " + h
		}
		return msg
	case v.Body != "" && !bytes.Contains(body, []byte(v.Body)):
		msg := fmt.Sprintf("the body does not contain %q", v.Body)
		if b := bodyStart(body); b != "" {
			msg += fmt.Sprintf("; it begins %q", b)
		}
		return msg
	}
	return ""
}

// bodyLines and bodyChars bound what a failed verification quotes of the
// body: its first 3 non-blank lines, at most 200 characters.
const (
	bodyLines = 3
	bodyChars = 200
)

// bodyStart is the start of body as one line: its first non-blank lines,
// trimmed and joined with " / ", cut at bodyChars ("…" marks the cut);
// "" when it has no text.
func bodyStart(body []byte) string {
	var parts []string
	for _, l := range strings.Split(string(body), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
		if len(parts) == bodyLines {
			break
		}
	}
	s := strings.Join(parts, " / ")
	if r := []rune(s); len(r) > bodyChars {
		s = string(r[:bodyChars]) + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// verifyHint names the usual cause of a verification answered with
// status (at url; scripted says the protocol names a script, as FastCGI
// does, and script is the SCRIPT_FILENAME its request sent): a 404 or 403
// of a scripted protocol is the script (SCRIPT_FILENAME names no file, or
// one the server will not run), another's 404 the URL's path. "" for
// other statuses.
func verifyHint(scripted bool, status int, url, script string) string {
	sent := ""
	if script != "" {
		sent = fmt.Sprintf(" (it was %s)", script)
	}
	switch {
	case scripted && status == 404:
		return "a FastCGI 404 is usually SCRIPT_FILENAME" + sent + " naming no file: it is the backend's document_root " +
			"joined with the URL's path, so check document_root (the current directory when not given) and that the path of " +
			url + " names the script (/index.php, not /)"
	case scripted && status == 403:
		return "a FastCGI 403 is usually SCRIPT_FILENAME" + sent + " naming a file the server will not run (php-fpm " +
			"runs only .php files, security.limit_extensions): check that the path of " + url + " names the script " +
			"(/index.php, not /) and the backend's document_root"
	case !scripted && status == 404:
		return "an HTTP 404: the backend serves nothing at the path of " + url + "; check the url's path"
	}
	return ""
}

// stop stops c's process, if running, and records how.
func (r *runner) stop(c *config) {
	if c.proc == nil {
		return
	}
	rep := c.proc.Stop()
	c.proc = nil
	if rep.Killed {
		c.res.Killed++
		r.logf("%s: ignored its stop signal for %s: killed", c.res.Name, c.sc.Backend.Grace)
	} else {
		r.logf("%s: stopped", c.res.Name)
	}
	if len(rep.Left) > 0 {
		c.res.Left = append(c.res.Left, rep.Left...)
		r.fail(c, study.FailStop, r.why(c, fmt.Sprintf("backend %q left processes after SIGKILL: %v", c.res.Name, rep.Left), nil))
	}
}

// stopAll stops every running configuration at once.
func (r *runner) stopAll() {
	var ps []*backend.Process
	var cs []*config
	for _, c := range r.configs {
		if c.proc != nil {
			ps, cs = append(ps, c.proc), append(cs, c)
		}
	}
	for i, rep := range backend.StopAll(ps) {
		c := cs[i]
		c.proc = nil
		if rep.Killed {
			c.res.Killed++
			r.logf("%s: stopped (killed: it ignored its stop signal)", c.res.Name)
		} else {
			r.logf("%s: stopped", c.res.Name)
		}
		if len(rep.Left) > 0 {
			c.res.Left = append(c.res.Left, rep.Left...)
			r.fail(c, study.FailStop, r.why(c, fmt.Sprintf("backend %q left processes after SIGKILL: %v", c.res.Name, rep.Left), nil))
		}
	}
}

// exited reports whether c's process has exited.
func (c *config) exited() bool {
	if c.proc == nil {
		return false
	}
	select {
	case <-c.proc.Done():
		return true
	default:
		return false
	}
}

// lostWait is how long the end of a round waits for the exit of a
// backend whose runs in it had failed requests.
const lostWait = 2 * time.Second

// exitedAfterRound reports whether c's process has exited by the end of a
// round. When c's runs of this round had failed requests, it waits up to
// lostWait for the exit: a backend that dies near the round's end fails
// its last requests a moment before its exit is seen.
func (r *runner) exitedAfterRound(c *config) bool {
	if c.exited() {
		return true
	}
	if c.proc == nil || !r.failedThisRound(c) {
		return false
	}
	select {
	case <-c.proc.Done():
		return true
	case <-time.After(lostWait):
		return false
	}
}

// failedThisRound reports whether a run of c's series in this round (the
// trials after the round's mark) had failed requests.
func (r *runner) failedThisRound(c *config) bool {
	for _, si := range c.series {
		for _, lv := range r.series[si].levels {
			for _, s := range lv.trials[lv.mark:] {
				if s.Failed > 0 {
					return true
				}
			}
		}
	}
	return false
}

// measure runs the rounds: every round measures the shared configurations
// together, then each exclusive one alone.
func (r *runner) measure(ctx context.Context) {
	var shared, excl []*config
	for _, c := range r.configs {
		if c.exclusive() {
			excl = append(excl, c)
		} else {
			shared = append(shared, c)
		}
	}
	for _, c := range shared {
		if ctx.Err() == nil {
			r.start(ctx, c)
		}
	}
	rounds := r.rounds
	// Rounds run until decided: after the first rounds, each round runs
	// only the series an undecided pair needs, until none is left, the
	// budget is spent or the most rounds ran.
	q, until := r.res.Sequential()
	var qs []question
	var need []bool // nil: every series
	var stopped string
	began, last := time.Now(), time.Duration(0)
	if until {
		rounds, qs = q.MaxRounds, questions(r.res)
	}
	for round := 1; round <= rounds && ctx.Err() == nil; round++ {
		if until && round > 1 {
			if round > q.MinRounds {
				var open int
				need, open = r.next(q, qs)
				n := count(need)
				if open == 0 {
					stopped = study.StoppedDecided
					break
				}
				if n == 0 {
					stopped = study.StoppedNoSeries
					break
				}
				r.logf("%d of %d pairs undecided: round %d (of at most %d) runs %d of %d series", open, len(qs), round, rounds, n, len(need))
			}
			// The next round is expected to last as long as the last
			// one did: it does not begin unless it fits in the budget.
			if b := r.st.Measure.Budget; b > 0 && time.Since(began)+last > b {
				stopped = study.StoppedBudget
				break
			}
		}
		roundStart := time.Now()
		r.res.Rounds = round
		for _, sr := range r.series {
			for li := range sr.levels {
				sr.levels[li].mark = len(sr.levels[li].trials)
			}
		}
		r.prog.open = until
		switch {
		case !until:
			r.roundBegins(round, rounds)
		case round <= q.MinRounds:
			r.markRound(round, rounds)
			r.logf("round %d of the first %d (until decided, at most %d)", round, q.MinRounds, rounds)
		default:
			r.markRound(round, rounds) // its line says the pairs undecided
		}
		var live []*config
		for _, c := range shared {
			if !c.dead && c.proc != nil && c.needed(need) {
				live = append(live, c)
			}
		}
		r.rng.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
		r.runRound(ctx, live, need)
		for _, c := range live {
			if r.exitedAfterRound(c) {
				r.lost(ctx, c, round, true, round < rounds)
			}
		}
		order := slices.Clone(excl)
		r.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, c := range order {
			if c.dead || ctx.Err() != nil || !c.needed(need) {
				continue
			}
			if !r.start(ctx, c) {
				continue
			}
			r.runRound(ctx, []*config{c}, need)
			if r.exitedAfterRound(c) {
				r.lost(ctx, c, round, false, round < rounds)
			}
			r.stop(c)
		}
		last = time.Since(roundStart)
	}
	if ctx.Err() != nil {
		r.res.Incomplete = true
	}
	if until {
		r.stopping(q, qs, stopped, began)
		rounds = r.res.Rounds
	}
	if len(excl) > 0 && rounds > 1 {
		var names []string
		for _, c := range excl {
			names = append(names, c.res.Name)
		}
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s ran alone (exclusive): started, measured and stopped in each of the %d rounds, between the others' runs",
			strings.Join(names, "; "), rounds))
	}
}

// lost handles a configuration that died during a round: its runs of
// that round are dropped. Lost once, it is measured again in the next
// round (a shared one restarted now, an exclusive one started as every
// round starts it); lost twice, or in the last round, it is stopped for
// the rest of the study.
func (r *runner) lost(ctx context.Context, c *config, round int, shared, more bool) {
	status := c.proc.ExitStatus()
	c.res.Lost++
	for _, si := range c.series {
		for li, lv := range r.series[si].levels {
			r.series[si].levels[li].trials = lv.trials[:lv.mark]
		}
	}
	tail := c.proc.Tail(tailLines)
	r.stop(c)
	c.res.Dir = c.dir // kept: it failed, even if it answers again
	head := fmt.Sprintf("backend %q was lost in round %d (%s)", c.res.Name, round, status)
	msg := head
	if len(tail) > 0 {
		msg += ": " + trimLine(tail[len(tail)-1])
	}
	msg += "; that round's runs of it are dropped"
	switch {
	case c.res.Lost > 1:
		r.fail(c, study.FailLost, r.why(c, head, tail, "that round's runs of it are dropped", "lost a second time, it is stopped for the rest of the study"))
	case !more:
		r.fail(c, study.FailLost, r.why(c, head, tail, "that round's runs of it are dropped"))
	case shared:
		c.res.Notes = append(c.res.Notes, msg+"; it was restarted once")
		r.logf("%s: restarting", msg)
		if ctx.Err() == nil {
			r.start(ctx, c)
		}
	default:
		c.res.Notes = append(c.res.Notes, msg+"; it is started again in the next round, as every round starts it")
		r.logf("%s", msg)
	}
}

// needed reports whether a series of c is among need (nil: every
// series).
func (c *config) needed(need []bool) bool {
	if need == nil {
		return true
	}
	for _, si := range c.series {
		if need[si] {
			return true
		}
	}
	return false
}

// runRound measures every series of cs that need holds (nil: every one)
// at every level, once, through the driver, and keeps each run's summary
// as a trial.
func (r *runner) runRound(ctx context.Context, cs []*config, need []bool) {
	var series []driver.Series
	var idx []int
	for _, c := range cs {
		for _, si := range c.series {
			if need != nil && !need[si] {
				continue
			}
			series = append(series, driver.Series{Label: r.res.Series[si].Label, Plan: r.series[si].plan})
			idx = append(idx, si)
		}
	}
	if len(series) == 0 {
		return
	}
	m := r.st.Measure
	o := r.o.Exec
	o.Observe = true
	o.Quiet = true
	cfg := driver.Config{Schedule: driver.Concurrencies(m.Levels, m.Requests, m.Duration),
		Warmup: driver.Warmup{Requests: m.Warmup}, KeepOnUnreachable: true, Options: o}
	if r.o.Progress != nil {
		cfg.Progress = func(p driver.Progress) { r.runBegins(p, idx) }
	}
	res, err := driver.Run(ctx, cfg, series)
	if err != nil {
		for _, c := range cs {
			r.fail(c, study.FailLost, r.why(c, fmt.Sprintf("backend %q could not be measured: %v", c.res.Name, err), nil))
		}
		return
	}
	for k, sr := range res.Series {
		si := idx[k]
		for li, s := range sr.Levels {
			if s.Interrupted {
				continue
			}
			lvl := slices.Index(m.Levels, s.Concurrency)
			if lvl < 0 {
				lvl = li
			}
			s := s
			lr := &r.series[si].levels[lvl]
			lr.trials = append(lr.trials, &s)
		}
	}
}

// finish turns the kept trials into steps, the comparisons and the
// answers.
func (r *runner) finish() {
	for si := range r.res.Series {
		se := &r.res.Series[si]
		c := r.configs[se.Config]
		for li, lv := range r.series[si].levels {
			ts := lv.trials
			if len(ts) == 0 {
				continue
			}
			st := study.Step{Concurrency: r.st.Measure.Levels[li]}
			var classes [load.NumClasses]int64
			st.KeepAliveIgnored = true
			for _, s := range ts {
				st.KeepAliveIgnored = st.KeepAliveIgnored && s.ClosedEvery()
				t := stats.TrialOf(s)
				st.Trials = append(st.Trials, t)
				st.Complete += s.Complete
				st.Failed += s.Failed
				st.KeepAliveRequests += s.KeepAliveRequests
				bc := s.Failures.ByClass()
				for k := range bc {
					classes[k] += bc[k]
				}
				if st.FailureSample == "" && len(s.ErrorSamples) > 0 {
					st.FailureSample = s.ErrorSamples[0].Message
				}
				if b := s.Backend; b != nil && b.Samples > 0 {
					c.pssSum += float64(b.MeanPSSBytes)
					c.pssN++
					c.res.PeakPSSBytes = max(c.res.PeakPSSBytes, b.PeakPSSBytes)
					c.res.MaxProcs = max(c.res.MaxProcs, b.ProcessesMax)
				}
			}
			if st.Failed > 0 {
				best := 0
				for k := 1; k < len(classes); k++ {
					if classes[k] > classes[best] {
						best = k
					}
				}
				st.FailureClass = load.ErrClass(best).String()
			}
			sum := trials.Summarize(st.Trials)
			st.RequestsPerSecond, st.MeanMs = study.FigureOf(sum.RequestsPerSecond), study.FigureOf(sum.MeanMs)
			st.P99Ms, st.MaxMs = study.FigureOf(sum.P99Ms), study.FigureOf(sum.MaxMs)
			st.Targets = targetSteps(ts)
			se.Steps = append(se.Steps, st)
		}
	}
	for _, c := range r.configs {
		if c.pssN > 0 {
			c.res.MeanPSSBytes = c.pssSum / float64(c.pssN)
		}
	}
	for _, c := range r.res.Configurations {
		if c.Failure != "" {
			r.res.Notes = append(r.res.Notes, c.Failure)
		}
		r.res.Notes = append(r.res.Notes, c.Notes...)
	}
	if r.res.Notes == nil {
		r.res.Notes = []string{}
	}
	r.res.Answer()
}

// targetSteps returns the per-target figures of a step of a mix from its
// trials: each target's requests, failures and body bytes summed, the
// medians of its p50, p99 and max over the trials in which it completed a
// request, with their intervals. Nil when the trials ran one request, or
// not the same targets.
func targetSteps(ts []*stats.Summary) []study.TargetStep {
	if len(ts) == 0 || len(ts[0].Targets) == 0 {
		return nil
	}
	out := make([]study.TargetStep, len(ts[0].Targets))
	per := make([][]trials.Trial, len(out))
	for i, t := range ts[0].Targets {
		out[i] = study.TargetStep{Target: t.Target, Weight: t.Weight}
	}
	for _, s := range ts {
		if len(s.Targets) != len(out) {
			return nil
		}
		for i, t := range s.Targets {
			if t.Target != out[i].Target {
				return nil
			}
			o := &out[i]
			o.Requests += t.Requests
			o.Failed += t.Failed
			o.BodyBytes += t.BodyBytes
			if t.Complete > 0 {
				per[i] = append(per[i], trials.Trial{P50Ms: t.P50Ms, P99Ms: t.P99Ms, MaxMs: t.MaxMs})
			}
		}
	}
	for i := range out {
		if len(per[i]) == 0 {
			continue
		}
		sum := trials.Summarize(per[i])
		out[i].P50Ms, out[i].P99Ms, out[i].MaxMs = study.FigureOf(sum.P50Ms), study.FigureOf(sum.P99Ms), study.FigureOf(sum.MaxMs)
	}
	return out
}
