package execute

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/backbench/backbench/internal/procstat"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// CheckSockets checks, without connecting, the Unix socket paths of the
// target or of its upstreams (sockets.StatUnix): a connection without a
// request takes some servers down, so reachability over the network is
// decided by the run's own dials (Watch). It fails only when no
// address is left; a bad path in a cluster is reported on stderr and shows
// in the report as that address's connect failures.
func CheckSockets(t sockets.Target, ups []sockets.Addr, stderr io.Writer) error {
	if len(ups) == 0 {
		return sockets.StatUnix(t)
	}
	var firstErr error
	ok := 0
	for _, a := range ups {
		ut := t
		ut.Network, ut.Address = a.Network, a.Address
		if err := sockets.StatUnix(ut); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if len(ups) > 1 {
				fmt.Fprintf(stderr, "backbench: warning: upstream %s: %v\n", a, err)
			}
			continue
		}
		ok++
	}
	if ok == 0 {
		return firstErr
	}
	return nil
}

// DialError words a dial failure of upstream i (of ups; the target itself
// when ups is empty) as the unreachable error of exit status 1.
func DialError(t sockets.Target, ups []sockets.Addr, i int, err error) error {
	network, address := t.Network, t.Address
	if i >= 0 && i < len(ups) {
		network, address = ups[i].Network, ups[i].Address
	}
	hint := ""
	if sockets.IsUnverified(err) {
		hint = "; --insecure accepts it"
	}
	return fmt.Errorf("cannot connect to %s %s: %s%s", network, address, strings.TrimPrefix(err.Error(), "connect: "), hint)
}

// warnDeadUpstreams reports on stderr the upstreams of a cluster that no
// dial of the run reached (their failures are in the report).
func warnDeadUpstreams(t sockets.Target, ups []sockets.Addr, errs []error, stderr io.Writer) {
	if len(ups) < 2 {
		return
	}
	for i, err := range errs {
		if err != nil && i < len(ups) {
			fmt.Fprintf(stderr, "backbench: warning: upstream %s: %v\n", ups[i], DialError(t, ups, i, err))
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
