package execute

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/recorder"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// SetupError is a problem with what the user asked for, found only when the
// run is set up (a client that cannot be built, a file that cannot be
// created): the command line is at fault, not the backend.
type SetupError struct{ Err error }

// Error is the cause's message.
func (e *SetupError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *SetupError) Unwrap() error { return e.Err }

// Options are how one run is carried out and reported while it goes; none
// of them changes what is measured.
type Options struct {
	// Stderr receives warnings, the progress lines and, with Verbosity 2
	// or more, every request and response head. Nil: discarded.
	Stderr io.Writer
	// Quiet drops the warnings and progress lines.
	Quiet bool
	// Verbosity 2 or more prints every request and response head.
	Verbosity int
	// Announce prints ab's "Benchmarking URL (be patient)" line once the
	// target is known to answer.
	Announce bool
	// Progress, when not nil, starts showing how the run goes once its
	// recorder exists; the function it returns ends that before the
	// report, with reached false when no dial reached the target.
	Progress func(rec *recorder.Recorder) (stop func(reached bool))
	// KeepRows keeps every request's times in the record (Record.Rows).
	KeepRows bool
	// Window is the width wanted for the windows of the run's timeline
	// (recorder.Options.Window); 0: the default.
	Window time.Duration
	// Windows, when > 0, cuts the run's time limit into that many equal
	// windows, counted in Record.Windows (a capacity step's steady-state
	// judgement).
	Windows int
	// Raw, when not nil, receives the --raw CSV: a header and one line
	// per request.
	Raw io.Writer
	// Setup, when not nil, is the process-wide setup made once by the
	// caller for several runs (a sweep): Run then neither raises the file
	// limit, nor checks the Unix socket paths, nor changes the scheduling
	// or thread cap, nor warns of dead upstreams.
	Setup *Setup
	// StopOnLoss ends the run when its backend is lost (Watch).
	StopOnLoss bool
	// KeepOnUnreachable runs on when no dial reaches the target and
	// returns the record, with Record.Unreachable set, instead of an
	// UnreachableError.
	KeepOnUnreachable bool
	// Observe samples the backend (Plan.BackendPIDs, Plan.FPMStatus)
	// during the run.
	Observe bool
	// Discard, for a warm-up, returns a record with counts only: no
	// notes, environment or backend.
	Discard bool
	// Started, if not nil, is called when the run starts, with a
	// function that counts the requests finished so far.
	Started func(done func() int64)
	// Privacy says what the record's environment leaves out: credentials
	// (unless KeepSecrets), the host name (with NoHostname).
	Privacy stats.Privacy
	// Version is backbench's version, for the record's environment.
	Version string
	// StartAt, when not zero, is the wall-clock time at which the load
	// starts: Run sets everything up, then waits for it (--start-at).
	StartAt time.Time
}

// Setup is the process-wide state of a run: the file limit in force, the
// scheduling policy of the client's threads, and how to undo the thread
// cap.
type Setup struct {
	// NoFile is the soft RLIMIT_NOFILE after raising it.
	NoFile uint64
	// Policy is the scheduling policy's name ("" if unknown).
	Policy string
	// Slice is the custom time slice of the client's threads
	// (OpenModelSlice in an open-model run); 0: the kernel's default.
	Slice time.Duration
	// CPUs are the CPUs the client's threads were put on (Plan.ClientCPUs),
	// empty when they were not pinned; PinError says why a pinning asked
	// for failed.
	CPUs     []int
	PinError error
	restore  func()
}

// Prepare raises the file limit for concurrency workers, applies the
// plan's scheduling policy, client CPUs and thread cap, and returns the
// setup; call Done on it after the last run. Warnings go to stderr unless
// quiet.
func Prepare(p *Plan, concurrency int, quiet bool, stderr io.Writer) *Setup {
	s := &Setup{restore: func() {}}
	var err error
	s.NoFile, err = sockets.RaiseNoFileLimit(fileWant(concurrency))
	if err != nil && !quiet {
		fmt.Fprintf(stderr, "backbench: warning: %v\n", err)
	}
	s.Policy = applySched(p.Sched, quiet, stderr)
	threads := p.Threads
	unpin := func() {}
	if len(p.ClientCPUs) > 0 {
		before, _ := sockets.Affinity(0)
		if _, err := sockets.SetThreadsAffinity(p.ClientCPUs); err != nil {
			s.PinError = err
			if !quiet {
				fmt.Fprintf(stderr, "backbench: warning: the client's CPUs: %v\n", err)
			}
		} else {
			s.CPUs = p.ClientCPUs
			if len(before) > 0 {
				unpin = func() { sockets.SetThreadsAffinity(before) }
			}
			if threads == 0 && os.Getenv("GOMAXPROCS") == "" && len(p.ClientCPUs) < runtime.GOMAXPROCS(0) {
				threads = len(p.ClientCPUs)
			}
		}
	}
	unslice := func() {}
	if p.Rate > 0 && p.Rate <= OpenModelSliceMaxRate {
		if _, err := sockets.SetSchedSlice(uint64(OpenModelSlice)); err == nil {
			s.Slice = OpenModelSlice
			unslice = func() { sockets.SetSchedSlice(0) }
		}
	}
	uncap := capThreads(threads)
	s.restore = sync.OnceFunc(func() { uncap(); unslice(); unpin() })
	return s
}

// OpenModelSlice is the time slice of the client's threads in an
// open-model run (sockets.SetSchedSlice; the kernel's default is 3 ms
// under EEVDF). The pacer's timerfd wakes a thread just before each
// intended start; on a core the backend or another program is using, a
// thread with the default slice may wait for that task's slice to end
// before it runs, which is the client's lateness at p99. With a short
// slice a woken thread's virtual deadline comes sooner, and it preempts.
// Measured beside the built-in backend on 2 cores (docs/performance.md,
// "Pacing: the 0.1 ms time slice"), alternating rounds: at 1,000 req/s the lateness p99's
// median over 10 rounds fell from 0.69 to 0.14 ms at the same CPU, where
// spinning the last 100 µs instead cost twice the CPU for less; at 3,000
// it made no difference, and at 10,000, where the threads seldom sleep and
// a short slice only cuts their work up, the p99 was worse (median of 7
// rounds 0.22 ms without, 0.67 ms with): hence OpenModelSliceMaxRate.
// Older kernels keep their default (the run's record says so).
const OpenModelSlice = 100 * time.Microsecond

// OpenModelSliceMaxRate is the highest --rate, in requests per second,
// whose run gets OpenModelSlice.
const OpenModelSliceMaxRate = 2000

// Done undoes the thread cap, the time slice and the client's CPUs.
func (s *Setup) Done() { s.restore() }

// applySched gives the client's threads the policy sched asks for, if any
// (otherwise they keep the one backbench was started with, chrt's for
// example), and returns the name of the policy they run with ("" if it
// cannot be read).
func applySched(sched string, quiet bool, stderr io.Writer) string {
	if sched != "" {
		want := sockets.SchedNormal
		if sched == "batch" {
			want = sockets.SchedBatch
		}
		if _, err := sockets.SetSchedPolicy(want); err != nil && !quiet {
			fmt.Fprintf(stderr, "backbench: warning: %v\n", err)
		}
	}
	p, err := sockets.SchedPolicyOf(0)
	if err != nil {
		return ""
	}
	return p.String()
}

// LockedWriter serializes whole Write calls of several goroutines to W.
type LockedWriter struct {
	mu sync.Mutex
	// W receives the writes.
	W io.Writer
}

// Write writes p to W whole, after any other Write in progress.
func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(p)
}

// Run runs the plan and returns the run: its record and the record's
// summary, derived once, here, when the record is final. It opens no connection without
// a request: whether the target can be reached is decided by the run's own
// first dials (Watch), after a check of the Unix socket paths (unless
// o.Setup says the caller made it).
func Run(ctx context.Context, p *Plan, o Options) (*stats.Run, error) {
	stderr := o.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	setup := o.Setup
	if setup == nil {
		setup = Prepare(p, p.Concurrency, o.Quiet, stderr)
		defer setup.Done()
		if err := CheckSockets(p.Target, p.Upstreams, stderr); err != nil {
			return nil, &UnreachableError{err}
		}
	}
	// ab's "Benchmarking" line, once a dial of the run has reached the
	// target (or after the run), so that an unreachable target gets one
	// error line only.
	var announceOnce sync.Once
	announce := func() {
		if o.Announce {
			announceOnce.Do(func() { fmt.Fprintf(stderr, "Benchmarking %s (be patient)\n", p.ShownURL()) })
		}
	}
	var verbose io.Writer
	if o.Verbosity >= 2 {
		verbose = &LockedWriter{W: stderr}
	}
	f, err := p.ClientFactory(verbose)
	if err != nil {
		return nil, &SetupError{err}
	}
	engine, err := p.ResolveEngine()
	if err != nil {
		return nil, &SetupError{err}
	}
	var raw *bufio.Writer
	if o.Raw != nil {
		raw = bufio.NewWriterSize(o.Raw, 256<<10)
		raw.WriteString(recorder.RawHeader)
	}
	ropts := recorder.Options{Shards: p.Concurrency, VariableLength: p.VariableLength, KeepRows: o.KeepRows || p.ABCompat,
		Upstreams: len(p.Upstreams), Windows: o.Windows, Span: p.Duration, Window: o.Window, Targets: len(p.Mix)}
	if raw != nil {
		ropts.Raw = raw
	}
	rec := recorder.New(ropts)
	defer capThreads(p.AutoThreads())()
	late := WaitUntil(ctx, o.StartAt)
	if o.Started != nil {
		o.Started(rec.Done)
	}
	stopProgress := func(bool) {}
	if o.Progress != nil {
		stopProgress = o.Progress(rec)
	}
	observed := func(*stats.Record) {}
	var samples *series
	if o.Observe {
		samples = &series{}
		observed = observe(ctx, p, samples)
	}
	watch := &Watch{Upstreams: len(p.Upstreams), OnReach: announce, StopOnLoss: o.StopOnLoss,
		KeepOnUnreachable: o.KeepOnUnreachable}
	cfg := Config{Shape: &p.Shape, Factory: f, Recorder: rec, Watch: watch}
	if len(p.Mix) > 1 {
		cfg.Mix = p.Schedule
	}
	var ring *ringEngine
	if p.Rate <= 0 && len(p.Stages) > 0 {
		// A closed-model run in stages holds workers back in turn: a
		// goroutine each.
		engine = EnginePoller
	}
	if engine == EngineUring {
		ring = &ringEngine{}
		cfg.Engine = ring
	}
	var out Outcome
	var acc OpenAccount
	if p.Rate > 0 {
		out, acc, err = Open(ctx, cfg)
	} else {
		out, err = Closed(ctx, cfg)
	}
	stopProgress(watch.Unreachable() == nil)
	if err != nil {
		observed(nil)
		return nil, err
	}
	unreachable := watch.Unreachable()
	if unreachable != nil && ctx.Err() == nil && !o.KeepOnUnreachable {
		observed(nil)
		return nil, &UnreachableError{DialError(p.Target, p.Upstreams, 0, unreachable)}
	}
	announce()
	if o.Setup == nil {
		warnDeadUpstreams(p.Target, p.Upstreams, watch.UpstreamErrors(), stderr)
	}
	if ring != nil && ring.fellBack.Load() {
		engine = EnginePoller // no ring could be set up after all
	}
	m := rec.Merge()
	m.Unreachable, m.BackendLost = unreachable, watch.Lost()
	m.Counts.Due, m.Counts.Unsent, m.Counts.UnsentInFlight = acc.Due, acc.Unsent, acc.InFlight
	m.Counts.Drained = out.Drained
	if raw != nil {
		if err := errors.Join(m.RawErr(), raw.Flush()); err != nil {
			observed(nil)
			return nil, fmt.Errorf("writing --raw file: %w", err)
		}
	}
	m.Plan = p.Record()
	// The record is the window's: from the start to the time limit (or
	// the run's end), the drain of the requests then in flight left out.
	m.StartedAt, m.EndedAt = stats.Wall{Time: load.Time(out.Start)}, stats.Wall{Time: load.Time(out.Stop)}
	m.Elapsed, m.Interrupted = out.Window(), out.Interrupted
	m.Timeline.Cover(m.Elapsed)
	for i := range m.Upstreams {
		m.Upstreams[i].Address = m.Plan.Upstreams[i]
	}
	for i := range m.Targets {
		m.Targets[i].Target = m.Plan.Targets[i]
	}
	if o.Discard {
		observed(nil)
		return &stats.Run{Record: m, Summary: stats.SummaryOf(m)}, nil
	}
	m.Environment = stats.CurrentEnvironmentFor(o.Version, o.Privacy)
	m.Environment.Engine = engine
	m.Client = clientHealth(out, setup.Policy)
	m.Client.TimeSliceMs = setup.Slice.Seconds() * 1000
	m.Client.CPUs = setup.CPUs
	m.Client.Engine = engine
	observed(m)
	samples.fill(m.Timeline, out.Start)
	m.TLS = tlsInfo(p.dialer, p.TLS)
	tw := 0
	if p.Target.Network == "tcp" && !p.KeepAlive {
		tw, _ = sockets.CountTimeWait(p.Target.Address)
	}
	// The run's summary is derived once, here, and kept with the record
	// in the run. The notes read it (none reads its notes) and are added
	// to the record; the summary then takes the record's notes, as
	// deriving it now would.
	sum := stats.SummaryOf(m)
	m.Notes = append(m.Notes, connectionNotes(m, &sum, p.Target, tw, setup.NoFile)...)
	m.Notes = append(m.Notes, responseNotes(&sum, p)...)
	if late > LateStart {
		m.Notes = append(m.Notes, lateNote(late))
	}
	sum.Notes = slices.Clip(append([]string{}, m.Notes...))
	// Slices a reader may append to are clipped, so that an append to one
	// copy of the summary never writes into the array another sees.
	sum.ErrorSamples, sum.Client.Warnings = slices.Clip(sum.ErrorSamples), slices.Clip(sum.Client.Warnings)
	return &stats.Run{Record: m, Summary: sum}, nil
}

// LateStart is how late after StartAt a run may start before its record
// says so in a note: a generator that started late does not cover the
// same window as the others.
const LateStart = 10 * time.Millisecond

// WaitUntil waits until the wall-clock time t (at once when t is zero or
// past), or until ctx ends (the run that follows is then interrupted at
// once), and returns how late after t it returned.
func WaitUntil(ctx context.Context, t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	if d := time.Until(t); d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return 0
		case <-timer.C:
		}
	}
	return max(time.Since(t), 0)
}

func lateNote(late time.Duration) string {
	return fmt.Sprintf("the load started %.1f ms after --start-at (setup took longer than the wait): its window is shifted", float64(late)/1e6)
}

// tlsInfo describes the TLS sessions of a run (nil without TLS).
func tlsInfo(d *sockets.Dialer, cfg *tls.Config) *stats.TLSInfo {
	if d == nil || cfg == nil {
		return nil
	}
	st, hs, res := d.TLSState()
	if st == nil {
		return nil
	}
	info := &stats.TLSInfo{Protocol: tlsVersionName(st.Version), Cipher: tls.CipherSuiteName(st.CipherSuite),
		ServerName: cfg.ServerName, Handshakes: hs, Resumed: res}
	if net.ParseIP(info.ServerName) != nil {
		info.ServerName = "" // not sent as SNI
	}
	if st.CurveID != 0 {
		info.TempKey = st.CurveID.String()
	}
	return info
}

// tlsVersionName spells versions as ab (OpenSSL) does: TLSv1.3.
func tlsVersionName(v uint16) string {
	return strings.Replace(tls.VersionName(v), "TLS 1", "TLSv1", 1)
}

// connectionNotes names the connection-level realities a run met, with
// their remedies, from its typed failure causes, its counts and the TIME_WAIT
// sockets it left: they are the client's or the kernel's limits, not the
// server's failures, and the user should know which is which. s is m's
// summary.
func connectionNotes(m *stats.Record, s *stats.Summary, t sockets.Target, timeWait int, noFile uint64) []string {
	var notes []string
	if n := m.CauseCount(load.KindRefused); n > 0 {
		notes = append(notes, fmt.Sprintf("%d connections refused: the server stopped listening or its listen queue overflowed", n))
	}
	if n := m.CauseCount(load.KindBacklogFull); n > 0 {
		notes = append(notes, fmt.Sprintf("%d connects failed at once with EAGAIN: the Unix socket's listen backlog was full "+
			"(TCP would have queued them); raise the server's backlog (php-fpm listen.backlog, net.core.somaxconn) or lower -c", n))
	}
	if n := m.CauseCount(load.KindNoFiles); n > 0 {
		notes = append(notes, fmt.Sprintf("%d connects failed with too many open files (the soft limit is %d): raise ulimit -n or lower -c", n, noFile))
	}
	if n := m.CauseCount(load.KindNoPorts); n > 0 {
		notes = append(notes, fmt.Sprintf("%d connects failed: the client ran out of ephemeral TCP ports; these are client-side "+
			"failures, not the server's: use -k, a Unix socket, widen net.ipv4.ip_local_port_range or set net.ipv4.tcp_tw_reuse=1", n))
	}
	if n := reconnectNote(s); n != "" {
		notes = append(notes, n)
	}
	if t.Network == "tcp" && !s.KeepAlive {
		if lo, hi, err := sockets.LocalPortRange(); err == nil && hi > lo && timeWait > (hi-lo+1)/2 {
			notes = append(notes, fmt.Sprintf("%d sockets to %s are in TIME_WAIT, over half of the %d ephemeral ports (%d-%d): "+
				"new connections will soon fail; use -k, a Unix socket, or net.ipv4.tcp_tw_reuse=1", timeWait, t.Address, hi-lo+1, lo, hi))
		}
	}
	ka := *s
	if n := m.Counts.Unsolicited; n > 0 {
		after := notesOf(s).AfterResponse
		notes = append(notes, fmt.Sprintf("the server sent %d bytes nobody asked for %s, after %d of the %d complete responses: "+
			"the client closed those %d connections rather than read the bytes as the answer to a request never sent "+
			"(a server bug: a Content-Length shorter than the body, or output written after the response)",
			m.Counts.UnsolicitedBytes, after, n, s.Complete, n))
		// Those connections were closed by the client, not the server:
		// the keep-alive notes must not blame the server for them.
		ka.KeepAliveRequests += n
	}
	notes = append(notes, keepAliveNotes(&ka)...)
	return notes
}

// responseNotes say what the responses hint at when every one was a
// non-2xx (the wrong script or path: php-fpm's "Primary script unknown"
// 404s with the default --document-root), or when a FastCGI backend wrote
// to stderr. p is the plan run, whose protocol says what to check.
func responseNotes(s *stats.Summary, p *Plan) []string {
	var notes []string
	said := ""
	if s.StderrFirstLine != "" {
		said = fmt.Sprintf("its FastCGI stderr said %q", s.StderrFirstLine)
	}
	if s.Complete > 0 && s.Non2xx == s.Complete {
		n := fmt.Sprintf("every response was non-2xx (%d of %d): the backend did not serve what you meant to measure; ", s.Non2xx, s.Complete)
		if nt := notesOf(s); nt.AllNon2xx != nil {
			n += nt.AllNon2xx(s, p.request(), p.ProtoOptions, said)
		}
		return append(notes, n)
	}
	if s.StderrBytes > 0 {
		n := fmt.Sprintf("the backend wrote %d bytes to FastCGI stderr (warnings or errors of the application: not failures, but worth a look)", s.StderrBytes)
		if said != "" {
			n += "; " + said
		}
		notes = append(notes, n)
	}
	return notes
}

// notesOf returns the words of the summary's protocol (recorded by
// scheme); a protocol not registered gets neutral words.
func notesOf(s *stats.Summary) protocol.Notes {
	if pr, err := protocol.Lookup(s.Target.Protocol); err == nil {
		return pr.Notes()
	}
	return protocol.Notes{KeepAlive: "keep-alive", AfterResponse: "after the response",
		Reconnects: "servers do this past their limit of kept connections or their idle timeout"}
}

// reconnectNote says that the server closed kept connections, with the
// reason servers of the target's protocol have: a FastCGI server that
// recycles its workers, an HTTP server past its limit of kept connections
// or its idle timeout. "" when no kept connection was closed.
func reconnectNote(s *stats.Summary) string {
	if s.Reconnects == 0 {
		return ""
	}
	why := notesOf(s).Reconnects
	return fmt.Sprintf("the server closed %d kept connections before a request; each was redialed and the request counted once (%s)", s.Reconnects, why)
}

// keepAliveNotes names what real servers do with kept connections that
// skews a -k run, as seen on php-fpm, libfcgi workers, Thin, Puma, Unicorn,
// Starman and gunicorn (scripts/backends.sh):
//
//   - a server that closes after every response although the client asked
//     to keep the connection (Unicorn, gunicorn's sync workers; nginx and
//     others over HTTP/1.0 when the response has no Content-Length): -k
//     then measures a connect per request, as without -k;
//   - a server that gives each kept connection a worker of its own until
//     the connection closes (php-fpm, libfcgi processes, Starman): with -c
//     above the worker count the extra connections wait in the listen queue
//     for most of the run, which shows as a few requests as long as the run;
//   - a stall of the same look whose time is in the connect is a full
//     listen queue dropping SYNs (Thin past its backlog of 100), and is
//     named as such.
func keepAliveNotes(s *stats.Summary) []string {
	if !s.KeepAlive || s.Complete == 0 {
		return nil
	}
	var notes []string
	// HTTP says "Connection: close", so nothing was counted as kept; a
	// FastCGI server just closes, so every request after the first of a
	// connection found it closed and was redialed.
	closedEvery := s.ClosedEvery()
	if closedEvery {
		words := notesOf(s)
		what := words.KeepAlive
		n := "every response"
		if s.Complete > 1 {
			n = fmt.Sprintf("every one of the %d responses", s.Complete)
		}
		line := fmt.Sprintf("-k was asked but the server closed the connection after %s: it ignores %s", n, what)
		if words.ClosedEvery != nil {
			line += words.ClosedEvery(s)
		} else {
			line += ", so every request paid a new connection, as without -k"
		}
		notes = append(notes, line)
	}
	total := s.ConnectionTimes.Total
	wallMs := s.TimeTaken * 1000
	stalled := s.Open == nil && s.Concurrency > 1 && s.Complete >= 2*int64(s.Concurrency) && wallMs > 0 &&
		total.Max >= 0.7*wallMs && total.Max > 5*total.Median && !closedEvery
	// A connect that took half the longest request is a SYN the kernel
	// dropped (the listen queue was full) and the client sent again after
	// a second or more: the queue's limit, not a worker held by a kept
	// connection (whose waiting connections connect at once and wait for
	// their first byte).
	connectStall := s.ConnectsOver1s > 0 || s.ConnectionTimes.Connect.Max >= total.Max/2
	if stalled && connectStall {
		notes = append(notes, fmt.Sprintf("the longest request (%.0f ms) lasted most of the run (%.0f ms) while the median was %.0f ms, "+
			"and its connect took %.0f ms: SYNs dropped by the server's full listen queue and sent again by the kernel after 1 s or more, "+
			"not a slow request; raise the server's listen backlog or lower -c", total.Max, wallMs, total.Median, s.ConnectionTimes.Connect.Max))
	}
	if stalled && !connectStall {
		notes = append(notes, fmt.Sprintf("the longest request (%.0f ms) lasted most of the run (%.0f ms) while the median was %.0f ms: "+
			"the mark of a server that gives each kept connection a worker until it closes (php-fpm children, libfcgi processes, "+
			"Starman workers) while the connections above its worker count wait in the listen queue for most of the run; "+
			"with -k keep -c at or below the worker count, or compare without -k", total.Max, wallMs, total.Median))
	}
	return notes
}
