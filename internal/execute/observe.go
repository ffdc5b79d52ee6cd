package execute

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/procstat"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// observe starts watching what a run does outside the client: the
// backend's processes and php-fpm's status page (Plan.BackendPIDs,
// Plan.FPMStatus), and the listen queues of a target on this machine
// (listenMeter). The returned function stops watching and adds
// what was seen, with its notes, to the run's record (nil: the run failed;
// only stop).
func observe(ctx context.Context, p *Plan, tl *series) func(*stats.Record) {
	backend := startBackendSampler(ctx, p, tl)
	listen := startListenMeter(p, tl)
	return func(m *stats.Record) {
		usage := backend.finish(ctx)
		if m == nil {
			return
		}
		m.Backend = usage
		listen.finish(m)
	}
}

// listenSampleInterval is how often the target's listen queues are read
// during a run, for their peak: each reading is one netlink dump of the
// machine's listening sockets (tens of microseconds).
const listenSampleInterval = 10 * time.Millisecond

// listenMeter watches the listen queues of a target on this machine: each
// of its own listening sockets through sock_diag (backlog, queue length
// sampled for its peak, and for TCP the socket's own drop counter), and the
// kernel's machine-wide TcpExt ListenOverflows and ListenDrops, which
// stand in where a TCP listener's own figures cannot be read.
type listenMeter struct {
	queues   []ownQueue
	before   sockets.ListenCounters
	haveWide bool // the machine-wide counters were read
	anyTCP   bool // a local TCP address is among the target's
	stop     chan struct{}
	done     sync.WaitGroup
	tl       *series // the run's timeline's samples
}

// ownQueue is one of the target's listening sockets.
type ownQueue struct {
	addr  sockets.Addr
	ok    bool // its figures could be read at the start
	first sockets.ListenerStat
	peak  int // written by the sampler until it stops
}

// read reads the socket's figures now.
func (q *ownQueue) read() (sockets.ListenerStat, error) {
	if q.addr.Network == "unix" {
		return sockets.UnixListener(q.addr.Address)
	}
	return sockets.TCPListener(q.addr.Address)
}

// startListenMeter returns nil when no address of the target is on this
// machine (nothing the kernel keeps here says anything about it).
func startListenMeter(p *Plan, tl *series) *listenMeter {
	addrs := p.Upstreams
	if len(addrs) == 0 {
		addrs = []sockets.Addr{{Network: p.Target.Network, Address: p.Target.Address}}
	}
	m := &listenMeter{stop: make(chan struct{}), tl: tl}
	for _, a := range addrs {
		switch {
		case a.Network == "tcp" && sockets.IsLocalTCP(a.Address):
			m.anyTCP = true
		case a.Network == "unix":
		default:
			continue
		}
		q := ownQueue{addr: a}
		if st, err := q.read(); err == nil {
			q.ok, q.first, q.peak = true, st, st.Queued
		}
		m.queues = append(m.queues, q)
	}
	if len(m.queues) == 0 {
		return nil
	}
	if m.anyTCP {
		if c, err := sockets.ReadListenCounters(); err == nil {
			m.before, m.haveWide = c, true
		}
	}
	m.done.Add(1)
	go m.sample()
	return m
}

// sample reads the queues' lengths until stop, keeping their peaks.
func (m *listenMeter) sample() {
	defer m.done.Done()
	t := time.NewTicker(listenSampleInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		longest := -1
		for i := range m.queues {
			q := &m.queues[i]
			if !q.ok {
				continue
			}
			if st, err := q.read(); err == nil {
				q.peak = max(q.peak, st.Queued)
				longest = max(longest, st.Queued)
			}
		}
		if longest >= 0 {
			m.tl.queued(longest)
		}
	}
}

// finish stops the sampling, reads every figure again and names a full
// listen queue in a note: the target's own socket when its own counter
// rose, the machine-wide counters (said to be machine-wide, with no blame
// on the target) only where no own counter could be read.
func (m *listenMeter) finish(s *stats.Record) {
	if m == nil {
		return
	}
	close(m.stop)
	m.done.Wait()
	somax := ""
	if v, err := os.ReadFile("/proc/sys/net/core/somaxconn"); err == nil {
		somax = " (now " + strings.TrimSpace(string(v)) + ")"
	}
	advice := fmt.Sprintf("Raise the server's backlog option (php-fpm listen.backlog, Thin --backlog, Puma's backlog, "+
		"serve --backlog), net.core.somaxconn%s, which caps it, or lower -c", somax)
	tcpUnread := false // a local TCP listener whose own drop counter could not be read
	for i := range m.queues {
		q := &m.queues[i]
		if !q.ok {
			tcpUnread = tcpUnread || q.addr.Network == "tcp"
			continue
		}
		end, err := q.read()
		if err != nil {
			// Gone by the end (the backend died): the start's figures stand.
			end = q.first
		}
		q.peak = max(q.peak, end.Queued)
		lq := stats.ListenQueue{Address: q.addr.String(), Backlog: q.first.Backlog, PeakQueued: q.peak}
		if q.first.HasDrops {
			d := max(end.Drops-q.first.Drops, 0)
			lq.Drops = &d
		} else if q.addr.Network == "tcp" {
			tcpUnread = true
		}
		s.ListenQueues = append(s.ListenQueues, lq)
		if s.ListenBacklog == nil {
			b := lq.Backlog
			s.ListenBacklog = &b
		}
		switch {
		case lq.Drops != nil && *lq.Drops > 0:
			s.Notes = append(s.Notes, fmt.Sprintf("the listen queue of the target's own socket %s overflowed: it dropped %d "+
				"connection attempts during the run (backlog %d, queue peaked at %d; the socket's own counter, read through sock_diag); "+
				"%d connects took 1 s or more (a dropped SYN is retransmitted after 1 s, so they look like a slow backend): "+
				"the server did not accept as fast as -c %d connected. %s",
				lq.Address, *lq.Drops, lq.Backlog, lq.PeakQueued, s.Counts.SlowConnects, s.Plan.Concurrency, advice))
		case q.addr.Network == "unix" && lq.Backlog > 0 && lq.PeakQueued >= lq.Backlog:
			s.Notes = append(s.Notes, fmt.Sprintf("the listen queue of the target's own socket %s was seen full (backlog %d, "+
				"queue peaked at %d, sampled every %v): connects beyond it fail at once with EAGAIN. %s",
				lq.Address, lq.Backlog, lq.PeakQueued, listenSampleInterval, advice))
		}
	}
	if !m.haveWide {
		return
	}
	after, err := sockets.ReadListenCounters()
	if err != nil {
		return
	}
	ov, dr := after.Overflows-m.before.Overflows, after.Drops-m.before.Drops
	s.ListenOverflows, s.ListenDrops = &ov, &dr
	if (ov <= 0 && dr <= 0) || !tcpUnread {
		// Where the target's own counters were read, they alone speak
		// for it: the machine-wide ones count every listener here.
		return
	}
	s.Notes = append(s.Notes, fmt.Sprintf("the machine's listen queues overflowed during the run: TcpExt ListenOverflows rose by %d "+
		"and ListenDrops by %d. These counters are machine-wide (every listener of this machine counts, another program's too) "+
		"and the target's own socket could not be read, so they may not be the target's; %d connects took 1 s or more "+
		"(a dropped SYN is retransmitted after 1 s). If they were the target's: %s",
		ov, dr, s.Counts.SlowConnects, advice))
}

// series keeps what the sampling of the backend saw during a run, with the
// time of each sample, for the run's timeline (stats.BackendSample per
// window): the backend's processes (every 100 ms) and the target's
// listen queues (every 10 ms). It is bounded: past maxPoints samples,
// neighbouring ones merge in pairs (the larger memory, processes and
// queue, the later CPU counter), which keeps the peaks.
type series struct {
	mu  sync.Mutex
	pts []point
}

// maxPoints bounds a series.
const maxPoints = 4096

// point is one sample: a reading of the processes (procs >= 0) or of the
// listen queues (queued >= 0).
type point struct {
	at     int64 // load.Now ns
	cpu    float64
	pss    int64
	procs  int
	queued int
}

func (s *series) add(p point) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pts) >= maxPoints {
		n := len(s.pts) / 2
		for i := range n {
			a, b := s.pts[2*i], s.pts[2*i+1]
			a.cpu = max(a.cpu, b.cpu)
			a.pss, a.procs, a.queued = max(a.pss, b.pss), max(a.procs, b.procs), max(a.queued, b.queued)
			s.pts[i] = a
		}
		s.pts = append(s.pts[:n], s.pts[2*n:]...)
	}
	s.pts = append(s.pts, p)
}

// reading adds a sample of the processes.
func (s *series) reading(r procstat.Reading) {
	s.add(point{at: load.Now(), cpu: r.CPUSeconds, pss: r.PSS, procs: r.Procs, queued: -1})
}

// queued adds a sample of the listen queues' longest accept queue.
func (s *series) queued(n int) {
	s.add(point{at: load.Now(), cpu: -1, procs: -1, queued: n})
}

// fill puts the samples into the timeline's windows (origin: the run's
// start, load.Now ns): a window's CPU time is the rise of the counter
// over its samples (from the last sample before it), its memory,
// processes and queue the largest sampled in it. Samples past the last
// window go to the last.
func (s *series) fill(tl *stats.Timeline, origin int64) {
	if s == nil || tl == nil || tl.Width <= 0 || len(tl.Windows) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := -1.0
	for _, p := range s.pts {
		if p.at < origin {
			if p.cpu >= 0 {
				prev = p.cpu
			}
			continue
		}
		i := min(int((p.at-origin)/int64(tl.Width)), len(tl.Windows)-1)
		b := tl.Windows[i].Backend
		if b == nil {
			b = &stats.BackendSample{ListenQueued: -1}
			tl.Windows[i].Backend = b
		}
		if p.procs >= 0 {
			if prev >= 0 {
				b.CPUSeconds += max(p.cpu-prev, 0)
			}
			prev = max(prev, p.cpu)
			b.PSSBytes, b.Processes = max(b.PSSBytes, p.pss), max(b.Processes, p.procs)
		}
		if p.queued >= 0 {
			b.ListenQueued = max(b.ListenQueued, p.queued)
		}
	}
}

// backendSampler samples the backend's processes and php-fpm's status page
// during a run.
type backendSampler struct {
	plan    *Plan
	sampler *procstat.Sampler
	usage   stats.BackendUsage
}

// startBackendSampler starts sampling what the plan asks for; nil when it
// asks for nothing.
func startBackendSampler(ctx context.Context, p *Plan, tl *series) *backendSampler {
	if len(p.BackendPIDs) == 0 && p.FPMStatus == "" {
		return nil
	}
	b := &backendSampler{plan: p, usage: stats.BackendUsage{PIDs: p.BackendPIDs}}
	if p.FPMStatus != "" {
		b.usage.FPMStatusStart = b.fpmStatus(ctx)
	}
	if len(p.BackendPIDs) > 0 {
		b.sampler = procstat.StartEach(p.BackendPIDs, 0, tl.reading)
	}
	return b
}

// finish stops the sampling and returns the usage (nil without a probe).
func (b *backendSampler) finish(ctx context.Context) *stats.BackendUsage {
	if b == nil {
		return nil
	}
	if b.sampler != nil {
		u := b.sampler.Stop()
		b.usage.CPUUserSeconds, b.usage.CPUSysSeconds = u.UserSeconds, u.SysSeconds
		b.usage.CPUSeconds = u.UserSeconds + u.SysSeconds
		b.usage.PeakRSSBytes, b.usage.MeanRSSBytes = u.PeakRSS, u.MeanRSS
		b.usage.PeakPSSBytes, b.usage.MeanPSSBytes, b.usage.PSSFallback = u.PeakPSS, u.MeanPSS, u.PSSFallback
		b.usage.USSMeanBytes, b.usage.USSMaxBytes = u.USSMean, u.USSMax
		b.usage.ProcessesMax, b.usage.ProcessesMean = u.MaxProcs, u.MeanProcs
		b.usage.Samples = u.Samples
	}
	if b.plan.FPMStatus != "" {
		b.usage.FPMStatusEnd = b.fpmStatus(context.WithoutCancel(ctx))
	}
	return &b.usage
}

// fpmStatus reads php-fpm's status page through the plan's protocol; on
// failure the map holds "error".
func (b *backendSampler) fpmStatus(ctx context.Context) map[string]string {
	p := b.plan
	pr, err := p.Protocol()
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	sr, ok := pr.(protocol.StatusReader)
	if !ok {
		return map[string]string{"error": "the " + pr.Name() + " protocol has no status page"}
	}
	return sr.ReadStatus(ctx, p.Request(nil), p.ProtoOptions, p.FPMStatus)
}

// Health is the client side of a run: how much CPU the process used and how
// late its goroutines were woken, to tell when the client itself was the
// bottleneck.
type Health struct {
	// UserCPU and SysCPU are the process's CPU time during the run.
	UserCPU, SysCPU time.Duration
	// Cores is the number of CPUs the process may use.
	Cores int
	// SchedLateMax is the worst lateness of a 10 ms sleep during the run:
	// how long a ready goroutine could wait for a CPU.
	SchedLateMax time.Duration
}

// healthMeter measures Health between start and stop.
type healthMeter struct {
	ru0     syscall.Rusage
	stop    chan struct{}
	wg      sync.WaitGroup
	lateMax time.Duration
}

const schedTick = 10 * time.Millisecond

func startHealth() *healthMeter {
	h := &healthMeter{stop: make(chan struct{})}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &h.ru0)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTimer(schedTick)
		defer t.Stop()
		for {
			before := time.Now()
			select {
			case <-h.stop:
				return
			case <-t.C:
				if late := time.Since(before) - schedTick; late > h.lateMax {
					h.lateMax = late
				}
				t.Reset(schedTick)
			}
		}
	}()
	return h
}

func (h *healthMeter) finish() Health {
	close(h.stop)
	h.wg.Wait()
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return Health{
		UserCPU:      tvDiff(ru.Utime, h.ru0.Utime),
		SysCPU:       tvDiff(ru.Stime, h.ru0.Stime),
		Cores:        runtime.GOMAXPROCS(0),
		SchedLateMax: h.lateMax,
	}
}

func tvDiff(a, b syscall.Timeval) time.Duration {
	return time.Duration((a.Sec-b.Sec)*1e9 + (int64(a.Usec)-int64(b.Usec))*1e3)
}

// clientHealth turns the runner's measurements into the report's lines,
// with a warning when the client itself may have been the bottleneck.
func clientHealth(out Outcome, policy string) stats.ClientHealth {
	h := out.Health
	c := stats.ClientHealth{
		Scheduling:         policy,
		CPUUserSeconds:     h.UserCPU.Seconds(),
		CPUSysSeconds:      h.SysCPU.Seconds(),
		Cores:              h.Cores,
		SchedulerLateMaxMs: float64(h.SchedLateMax) / 1e6,
		Warnings:           []string{},
	}
	if el := out.Elapsed(); el.Seconds() >= stats.CPUShareMinSeconds {
		c.CPUPercent = float64(h.UserCPU+h.SysCPU) / float64(el) * 100
	}
	if c.Cores > 0 && c.CPUPercent >= stats.CPUWarnFraction*100*float64(c.Cores) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("client CPU at %.0f%% of %d cores: the client may have been the bottleneck", c.CPUPercent, c.Cores))
	}
	if c.SchedulerLateMaxMs > stats.SchedLateWarnMs {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the client's goroutines waited up to %.1f ms for a CPU: latencies include client delay", c.SchedulerLateMaxMs))
	}
	return c
}
