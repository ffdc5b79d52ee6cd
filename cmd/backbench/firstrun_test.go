package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/cli"
	"github.com/backbench/backbench/internal/realbackend"
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

// TestNoteEveryResponseNon2xx: when every response is a non-2xx the report
// says so in a Note, with what to check: for FastCGI the SCRIPT_FILENAME
// sent, --document-root and --param SCRIPT_FILENAME=.
func TestNoteEveryResponseNon2xx(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		t.Run(proto, func(t *testing.T) {
			srv := fixtures.StartTB(t, proto, "unix", fixtures.Options{Status: 404})
			args := []string{"-n", "5", srv.URL("/index.php")}
			if proto == fixtures.ProtoFCGI {
				args = append([]string{"--document-root", "/srv/www"}, args...)
			}
			s := benchJSON(t, args...)
			want := map[string]string{
				fixtures.ProtoFCGI: "every response was non-2xx (5 of 5): the backend did not serve what you meant to measure; " +
					"SCRIPT_FILENAME was /srv/www/index.php: check the URL's path and --document-root (default: the current directory), " +
					"or set --param SCRIPT_FILENAME=/path/to/script",
				fixtures.ProtoHTTP: "every response was non-2xx (5 of 5)",
			}[proto]
			if !notesHave(s.Notes, want) {
				t.Errorf("notes %q lack %q", s.Notes, want)
			}
			// Some 2xx: no such note.
			ok := fixtures.StartTB(t, proto, "unix", fixtures.Options{})
			if s := benchJSON(t, "-n", "3", ok.URL("/")); notesHave(s.Notes, "non-2xx") {
				t.Errorf("2xx responses got the note: %q", s.Notes)
			}
		})
	}
}

// TestNotePHPFPMPrimaryScriptUnknown: php-fpm with the default
// --document-root (this directory, which has no such script) answers 404
// "File not found." and "Primary script unknown" on FastCGI stderr: the
// report's Note quotes it and says what to check; with the right document
// root a script that writes to stderr gets the stderr note instead.
func TestNotePHPFPMPrimaryScriptUnknown(t *testing.T) {
	f := realbackend.PHPFPM(t, "unix")
	code, out, errs := runMain(t, context.Background(), "bench", "-n", "4", f.URL(realbackend.HelloScript))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Non-2xx responses:      4\n", "Note:                   every response was non-2xx (4 of 4)",
		"--param SCRIPT_FILENAME=", `its FastCGI stderr said "Primary script unknown"`} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	s := benchJSON(t, "-n", "4", "--document-root", f.DocRoot, f.URL(realbackend.HelloScript))
	if s.Non2xx != 0 || notesHave(s.Notes, "non-2xx") || s.StderrFirstLine != "" || notesHave(s.Notes, "stderr") {
		t.Errorf("a good run: non-2xx %d, stderr %q, notes %q", s.Non2xx, s.StderrFirstLine, s.Notes)
	}
	s = benchJSON(t, "-n", "4", "--document-root", f.DocRoot, f.URL(realbackend.WarnScript))
	if s.Non2xx != 0 || s.StderrBytes == 0 || !strings.Contains(s.StderrFirstLine, realbackend.WarnMessage) ||
		!notesHave(s.Notes, "bytes to FastCGI stderr") || !notesHave(s.Notes, realbackend.WarnMessage) {
		t.Errorf("stderr: non-2xx %d, %d bytes, first line %q, notes %q", s.Non2xx, s.StderrBytes, s.StderrFirstLine, s.Notes)
	}
}

// TestBenchProgress: without a terminal, ab's heartbeat lines (every tenth
// of -n, every 100 at least; every tenth of -t with -t alone); on a
// terminal, one live line redrawn and erased before the report; -q
// silences both.
func TestBenchProgress(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	heartbeat := func(n int) string {
		var b strings.Builder
		for k := max(n/10, 100); k < n; k += max(n/10, 100) {
			fmt.Fprintf(&b, "Completed %d requests\n", k)
		}
		return b.String() + fmt.Sprintf("Finished %d requests\n", n)
	}
	for _, n := range []int{1000, 200} {
		code, out, errs := runMain(t, context.Background(), "bench", "-k", "-c", "2", "-n", strconv.Itoa(n), srv.URL("/"))
		if want := "Benchmarking " + srv.URL("/") + " (be patient)\n" + heartbeat(n); code != 0 || errs != want {
			t.Errorf("-n %d: exit %d, stderr %q, want %q", n, code, errs, want)
		}
		if strings.Contains(out, "Completed") {
			t.Error("heartbeat on stdout")
		}
	}
	if code, _, errs := runMain(t, context.Background(), "bench", "-q", "-n", "1000", srv.URL("/")); code != 0 || errs != "" {
		t.Errorf("-q: exit %d, stderr %q", code, errs)
	}

	// -t alone, the real binary with stderr a pipe: a line every tenth of
	// the time limit.
	bin := buildBinary(t)
	slow := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 2 * time.Millisecond})
	cmd := exec.Command(bin, "bench", "-k", "-t", "1", slow.URL("/"))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("-t: %v %s", err, errb.String())
	}
	if lines := regexp.MustCompile(`(?m)^Completed \d+ requests$`).FindAllString(errb.String(), -1); len(lines) < 5 || len(lines) > 9 ||
		!regexp.MustCompile(`\nFinished \d+ requests\n$`).MatchString(errb.String()) {
		t.Errorf("-t 1: stderr %q", errb.String())
	}

	// A terminal (pretended): the live line, erased; no heartbeat.
	old, oldEvery := isTerminal, cli.ProgressEvery
	isTerminal, cli.ProgressEvery = func(io.Writer) bool { return true }, 5*time.Millisecond
	t.Cleanup(func() { isTerminal, cli.ProgressEvery = old, oldEvery })
	code, out, errs := runMain(t, context.Background(), "bench", "-k", "-n", "300", slow.URL("/"))
	if code != 0 || !regexp.MustCompile(`\r\x1b\[K\d+\.\d s: \d+/300 requests, \d+ req/s, 0 failed, ETA \d+s`).MatchString(errs) ||
		!strings.HasSuffix(errs, "\r\x1b[K") || strings.Contains(errs, "Completed") || strings.Contains(out, "\r") {
		t.Errorf("terminal: exit %d, stderr %q", code, errs)
	}
}

// TestBenchProgressOnAPty runs the real binary on a pseudo-terminal (with
// script(1)): the live line shows up and is erased before the report.
func TestBenchProgressOnAPty(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to make a pty")
	}
	bin := buildBinary(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 2 * time.Millisecond})
	out, err := exec.Command(script, "-q", "-e", "-c", bin+" bench -k -t 0.8 "+srv.URL("/")+" 2>&1", "/dev/null").Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s := string(out)
	if !regexp.MustCompile(`\r\x1b\[K\d+\.\d s: \d+ requests, \d+ req/s, 0 failed, ETA \ds`).MatchString(s) ||
		!regexp.MustCompile(`\r\x1b\[K(\r?\n)*Server Software:`).MatchString(s) {
		t.Errorf("pty output %q", s[:min(len(s), 600)])
	}
	if strings.Contains(s, "Completed") {
		t.Errorf("heartbeat lines on a terminal: %q", s[:min(len(s), 600)])
	}
}
