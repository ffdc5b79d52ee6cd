package execute

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/internal/procstat"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// checkReachable checks every upstream before any load. It fails only when
// none can be reached; a dead address in a cluster is reported on stderr
// and shows in the report as that address's connect failures.
func checkReachable(ctx context.Context, t sockets.Target, ups []sockets.Addr, timeout time.Duration, stderr io.Writer) error {
	if len(ups) == 0 {
		return sockets.Check(ctx, t, timeout)
	}
	var firstErr error
	ok := 0
	for _, a := range ups {
		ut := t
		ut.Network, ut.Address = a.Network, a.Address
		if err := sockets.Check(ctx, ut, timeout); err != nil {
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

// backendProbe samples the backend's processes and php-fpm's status page
// during a run.
type backendProbe struct {
	plan    *Plan
	sampler *procstat.Sampler
	usage   stats.BackendUsage
}

// startBackendProbe starts sampling what the plan asks for; nil when it
// asks for nothing.
func startBackendProbe(ctx context.Context, p *Plan) *backendProbe {
	if len(p.BackendPIDs) == 0 && p.FPMStatus == "" {
		return nil
	}
	b := &backendProbe{plan: p, usage: stats.BackendUsage{PIDs: p.BackendPIDs}}
	if p.FPMStatus != "" {
		b.usage.FPMStatusStart = b.fpmStatus(ctx)
	}
	if len(p.BackendPIDs) > 0 {
		b.sampler = procstat.Start(p.BackendPIDs, 0)
	}
	return b
}

// finish stops the sampling and returns the usage (nil without a probe).
func (b *backendProbe) finish(ctx context.Context) *stats.BackendUsage {
	if b == nil {
		return nil
	}
	if b.sampler != nil {
		u := b.sampler.Stop()
		b.usage.CPUUserSeconds, b.usage.CPUSysSeconds = u.UserSeconds, u.SysSeconds
		b.usage.CPUSeconds = u.UserSeconds + u.SysSeconds
		b.usage.PeakRSSBytes, b.usage.MeanRSSBytes = u.PeakRSS, u.MeanRSS
		b.usage.ProcessesMax, b.usage.ProcessesMean = u.MaxProcs, u.MeanProcs
		b.usage.Samples = u.Samples
	}
	if b.plan.FPMStatus != "" {
		b.usage.FPMStatusEnd = b.fpmStatus(context.WithoutCancel(ctx))
	}
	return &b.usage
}

// fpmStatus reads php-fpm's status page; on failure the map holds "error".
func (b *backendProbe) fpmStatus(ctx context.Context) map[string]string {
	p := b.plan
	t := p.Target
	t.Path, t.RawQuery = p.FPMStatus, ""
	status, body, err := fcgi.Fetch(ctx, fcgi.Config{Target: t, Method: "GET", DocumentRoot: p.DocumentRoot,
		Timeout: p.Timeout, Dialer: p.Dialer()})
	switch {
	case err != nil:
		return map[string]string{"error": err.Error()}
	case status != 200:
		return map[string]string{"error": fmt.Sprintf("status %d (is pm.status_path = %s set?)", status, p.FPMStatus)}
	}
	return fcgi.ParseFPMStatus(body)
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
	if st.CurveID != 0 {
		info.TempKey = st.CurveID.String()
	}
	return info
}

// tlsVersionName spells versions as ab (OpenSSL) does: TLSv1.3.
func tlsVersionName(v uint16) string {
	return strings.Replace(tls.VersionName(v), "TLS 1", "TLSv1", 1)
}
