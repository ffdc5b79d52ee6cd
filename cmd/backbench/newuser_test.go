package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
)

// TestKeepAliveLineSaysWhatIsSent: the report's Keep-alive line names the
// Connection header that went out (or that none did), as the request head
// printed by -v 2 shows it.
func TestKeepAliveLineSaysWhatIsSent(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	cases := []struct {
		args []string
		line string // after "Keep-alive:" and the padding
		sent string // the Connection header line in the request head, "" for none
	}{
		{nil, "off (Connection: close)", "Connection: close"},
		{[]string{"-k"}, "on (HTTP/1.1, no Connection header sent)", ""},
		{[]string{"--http1.0"}, "off (HTTP/1.0, no Connection header sent)", ""},
		{[]string{"--http1.0", "-k"}, "on (Connection: keep-alive)", "Connection: keep-alive"},
		{[]string{"-H", "Connection: Upgrade"}, "off (Connection: Upgrade)", "Connection: Upgrade"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append(append([]string{"bench", "-v", "2", "-n", "2"}, c.args...), srv.URL("/"))
			code, out, errs := runMain(t, context.Background(), args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if want := "Keep-alive:             " + c.line + "\n"; !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
			head, _, _ := strings.Cut(errs, "\r\n\r\n")
			got := ""
			for _, l := range strings.Split(head, "\r\n") {
				if strings.HasPrefix(strings.ToLower(l), "connection:") {
					got = l
				}
			}
			if got != c.sent {
				t.Errorf("sent %q, want %q; head:\n%s", got, c.sent, head)
			}
		})
	}
}

// TestFCGIKeepAliveCountsOpenConnections: a FastCGI server that closes
// after every response although FCGI_KEEP_CONN was set leaves no kept
// response but the last of each connection (which the run ends before the
// close is seen), whatever the redials.
func TestFCGIKeepAliveCountsOpenConnections(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{Behaviour: fixtures.Behaviour{KeepConn: fixtures.KeepConnIgnore}})
	s := benchJSON(t, "-k", "-n", "60", "-c", "2", srv.URL("/"))
	if s.Complete != 60 || s.Failed != 0 || s.Reconnects < 50 {
		t.Fatalf("complete %d failed %d reconnects %d", s.Complete, s.Failed, s.Reconnects)
	}
	if s.KeepAliveRequests > 2 {
		t.Errorf("%d keep-alive requests with %d reconnects, want at most 2", s.KeepAliveRequests, s.Reconnects)
	}
}

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
			// Untrusted (the test process's own roots): at once, one line.
			start := time.Now()
			code, stdout, errs := runMain(t, context.Background(), "bench", "-t", "30", "-c", "4", srv.URL("/"))
			if code != 1 || stdout != "" || !strings.HasSuffix(errs, "certificate does not verify: x509: certificate signed by unknown authority; --insecure accepts it\n") ||
				strings.Count(errs, "backbench:") != 1 || strings.Contains(errs, "ServerName") {
				t.Errorf("untrusted: exit %d, stderr %q, stdout %q", code, errs, stdout)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("an untrusted certificate took %v to report", el)
			}
		})
	}
}
