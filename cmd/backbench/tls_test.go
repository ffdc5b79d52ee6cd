package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/stats"
)

// TestTLSVerifiesIPHosts: an https target given by IP address is verified
// against the certificate's IP addresses (as curl does), one given by a
// Unix socket against "localhost"; a certificate the system does not trust
// is one line and exit 1, however long the run was to be. The trusted case
// runs the real binary with SSL_CERT_FILE naming the fixture's certificate.
func TestTLSVerifiesIPHosts(t *testing.T) {
	cfg, err := fixtures.SelfSignedTLS()
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cfg.Certificates[0].Certificate[0]})
	if err := os.WriteFile(ca, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	for _, network := range []string{"tcp", "unix"} {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{TLS: cfg})
		t.Run(network, func(t *testing.T) {
			cmd := exec.Command(bin, "bench", "-q", "--format", "json", "-n", "20", "-c", "2", srv.URL("/"))
			cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+ca, "SSL_CERT_DIR="+filepath.Dir(ca))
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("trusted certificate: %v: %s", err, errb.String())
			}
			s := decodeSummary(t, out.String())
			if s.Complete != 20 || s.Failed != 0 || s.TLS == nil {
				t.Fatalf("complete %d failed %d tls %+v errors %v", s.Complete, s.Failed, s.TLS, s.ErrorSamples)
			}
			if want := map[string]string{"tcp": "", "unix": "localhost"}[network]; s.TLS.ServerName != want {
				t.Errorf("server name %q, want %q (no SNI for an IP)", s.TLS.ServerName, want)
			}
			// Untrusted (the test process's own roots): at once, one line
			// (no heartbeat around it).
			start := time.Now()
			code, stdout, errs := runMain(t, context.Background(), "bench", "-t", "30", "-c", "4", srv.URL("/"))
			if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.HasSuffix(errs, "certificate does not verify: x509: certificate signed by unknown authority; --insecure accepts it\n") ||
				strings.Count(errs, "backbench bench:") != 1 || strings.Contains(errs, "ServerName") {
				t.Errorf("untrusted: exit %d, stderr %q, stdout %q", code, errs, stdout)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("an untrusted certificate took %v to report", el)
			}
		})
	}
}

// TestHTTPSText: bench's text report names the TLS protocol, cipher and
// key exchange (what TLS runs record is tested in internal/execute).
func TestHTTPSText(t *testing.T) {
	cfg, err := fixtures.SelfSignedTLS()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "-n", "3", "--insecure",
		fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{TLS: cfg}).URL("/"))
	if code != 0 || !strings.Contains(out, "SSL/TLS Protocol:       TLSv1.3,TLS_") || !strings.Contains(out, "Server Temp Key:") {
		t.Errorf("exit %d %s\n%s", code, errs, out)
	}
}

// decodeSummary reads bench's JSON summary.
func decodeSummary(t *testing.T, out string) stats.Summary {
	t.Helper()
	var s stats.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	return s
}
