package execute

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// observe starts watching what a run does outside the client: the
// backend's processes and php-fpm's status page (Plan.BackendPIDs,
// Plan.FPMStatus), and the kernel's listen queue counters when the target
// is a local TCP address. The returned function stops watching and adds
// what was seen, with its notes, to the run's record (nil: the run failed;
// only stop).
func observe(ctx context.Context, p *Plan) func(*stats.Record) {
	backend := startBackendSampler(ctx, p)
	listen := startListenMeter(p)
	return func(m *stats.Record) {
		usage := backend.finish(ctx)
		if m == nil {
			return
		}
		m.Backend = usage
		listen.finish(m)
	}
}

// listenMeter reads the kernel's TcpExt ListenOverflows and ListenDrops
// before and after a run against local TCP addresses.
type listenMeter struct {
	addrs  []string // local TCP addresses of the target
	before sockets.ListenCounters
}

// startListenMeter returns nil when no address of the target is a local
// TCP one (the counters would say nothing about it) or the counters
// cannot be read.
func startListenMeter(p *Plan) *listenMeter {
	var addrs []string
	if len(p.Upstreams) > 0 {
		for _, a := range p.Upstreams {
			if a.Network == "tcp" && sockets.IsLocalTCP(a.Address) {
				addrs = append(addrs, a.Address)
			}
		}
	} else if p.Target.Network == "tcp" && sockets.IsLocalTCP(p.Target.Address) {
		addrs = []string{p.Target.Address}
	}
	if len(addrs) == 0 {
		return nil
	}
	c, err := sockets.ReadListenCounters()
	if err != nil {
		return nil
	}
	return &listenMeter{addrs: addrs, before: c}
}

// finish reads the counters again and, when they rose, names the full
// listen queue in a note.
func (p *listenMeter) finish(s *stats.Record) {
	if p == nil {
		return
	}
	after, err := sockets.ReadListenCounters()
	if err != nil {
		return
	}
	ov, dr := after.Overflows-p.before.Overflows, after.Drops-p.before.Drops
	s.ListenOverflows, s.ListenDrops = &ov, &dr
	var backlogs []string
	for _, a := range p.addrs {
		if b, _, err := sockets.ListenBacklog(a); err == nil {
			if s.ListenBacklog == nil {
				s.ListenBacklog = &b
			}
			backlogs = append(backlogs, fmt.Sprintf("%d on %s", b, a))
		}
	}
	if ov <= 0 && dr <= 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the kernel's listen queue overflowed during the run: ListenOverflows rose by %d and ListenDrops by %d "+
		"(TcpExt counters, machine-wide: another program's full queue counts too); ", ov, dr)
	fmt.Fprintf(&b, "%d connects took 1 s or more (a dropped SYN is retransmitted after 1 s, so they look like a slow backend)", s.Counts.SlowConnects)
	if len(backlogs) > 0 {
		fmt.Fprintf(&b, "; the target's listen backlog is %s (ss -ltn's Send-Q)", strings.Join(backlogs, ", "))
	}
	somax := ""
	if v, err := os.ReadFile("/proc/sys/net/core/somaxconn"); err == nil {
		somax = " (now " + strings.TrimSpace(string(v)) + ")"
	}
	fmt.Fprintf(&b, ": the server did not accept as fast as -c %d connected. Raise the server's backlog option "+
		"(php-fpm listen.backlog, Thin --backlog, Puma's backlog, serve --backlog), net.core.somaxconn%s, which caps it, or lower -c",
		s.Plan.Concurrency, somax)
	s.Notes = append(s.Notes, b.String())
}
