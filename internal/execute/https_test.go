package execute_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
)

// TestHTTPS: a TLS fixture over TCP and a Unix socket, with and without
// keep-alive: zero failures, protocol and cipher reported, sessions resumed
// when connections are not kept. Without Insecure the self-signed
// certificate is refused before the run.
func TestHTTPS(t *testing.T) {
	cfg, err := fixtures.SelfSignedTLS()
	if err != nil {
		t.Fatal(err)
	}
	for _, network := range []string{"tcp", "unix"} {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{TLS: cfg, BodyBytes: 100})
		for _, ka := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/keepalive=%v", network, ka), func(t *testing.T) {
				s := execBenchSummary(t, srv.URL("/"), func(o *plan.Options) {
					o.Insecure, o.Requests, o.Concurrency, o.KeepAlive = true, 50, 2, ka
				})
				if s.Failed != 0 || s.Complete != 50 || s.DocumentLength != 100 {
					t.Fatalf("complete %d failed %d doclen %d %v", s.Complete, s.Failed, s.DocumentLength, s.ErrorSamples)
				}
				if s.TLS == nil || !strings.HasPrefix(s.TLS.Protocol, "TLSv1.") || s.TLS.Cipher == "" {
					t.Fatalf("tls %+v", s.TLS)
				}
				if ka && s.TLS.Handshakes != 2 {
					t.Errorf("keep-alive: %d handshakes for 2 connections", s.TLS.Handshakes)
				}
				if !ka && (s.TLS.Handshakes != 50 || s.TLS.Resumed < 40) {
					t.Errorf("no keep-alive: %d handshakes, %d resumed", s.TLS.Handshakes, s.TLS.Resumed)
				}
				if s.ConnectionTimes.Connect.Max <= 0 {
					t.Error("the handshake is not in Connect")
				}
			})
		}
		// Without Insecure the self-signed certificate is refused: an
		// error, no run.
		o := plan.Defaults(srv.URL("/"))
		o.Requests, o.RequestsSet = 2, true
		l, err := o.Build()
		if err != nil {
			t.Fatal(err)
		}
		run, err := execute.Run(t.Context(), l.Plan, execute.Options{Quiet: true})
		if err == nil || run != nil && run.Summary.Complete != 0 ||
			!strings.Contains(err.Error(), "certificate does not verify: x509: certificate signed by unknown authority; --insecure accepts it") {
			t.Errorf("unverified certificate: %v, run %+v", err, run)
		}
	}
}
