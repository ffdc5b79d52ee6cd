package realbackend

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fcgiRequest is a minimal FastCGI Responder request for SCRIPT_FILENAME
// file, written out byte by byte (id 1, no keep-alive, empty body).
func fcgiRequest(file string) []byte {
	pair := func(n, v string) []byte { return append(append([]byte{byte(len(n)), byte(len(v))}, n...), v...) }
	params := append(pair("SCRIPT_FILENAME", file), pair("REQUEST_METHOD", "GET")...)
	b := []byte{1, 1, 0, 1, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}
	b = append(b, 1, 4, 0, 1, 0, byte(len(params)), byte(-len(params)&7), 0)
	b = append(b, params...)
	b = append(b, make([]byte, -len(params)&7)...)
	b = append(b, 1, 4, 0, 1, 0, 0, 0, 0)
	return append(b, 1, 5, 0, 1, 0, 0, 0, 0)
}

func TestPHPFPM(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			var pid int
			t.Run("serve", func(t *testing.T) {
				f := PHPFPM(t, network)
				pid = f.PID
				if f.Network != network || !strings.HasPrefix(f.URL(HelloScript), "fcgi://") || !strings.HasSuffix(f.URL(HelloScript), HelloScript) {
					t.Errorf("FPM %+v URL %q", f, f.URL(HelloScript))
				}
				c, err := net.Dial(network, f.Addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.Write(fcgiRequest(f.DocRoot + HelloScript)); err != nil {
					t.Fatal(err)
				}
				// php-fpm closes the connection after a request without
				// FCGI_KEEP_CONN, so the whole response can be read to EOF.
				resp, err := io.ReadAll(c)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(resp, []byte("\r\n\r\n"+HelloBody)) {
					t.Errorf("response %q lacks the hello body", resp)
				}
			})
			if pid == 0 {
				return
			}
			// The cleanup of the subtest stopped php-fpm.
			if err := syscall.Kill(pid, 0); err == nil {
				t.Errorf("php-fpm (pid %d) still runs after the test", pid)
			}
		})
	}
}

func TestMissingSkipsOutsideCI(t *testing.T) {
	t.Setenv("CI", "")
	var inner *testing.T
	after := false
	t.Run("skips", func(t *testing.T) {
		inner = t
		Missing(t, "backend absent")
		after = true
	})
	if inner == nil || !inner.Skipped() || after {
		t.Errorf("Missing did not skip the test (ran on: %v)", after)
	}
}

// TestSkipLog: a skipped real-backend test is one line of the file named
// by $BACKBENCH_SKIPLOG (make test lists them at its end).
func TestSkipLog(t *testing.T) {
	t.Setenv("CI", "")
	log := filepath.Join(t.TempDir(), "skipped")
	t.Setenv(SkipLogEnv, log)
	for _, reason := range []string{"php-fpm is not installed", "thin: no\nruby"} {
		t.Run("x", func(t *testing.T) { Missing(t, reason) })
	}
	data, err := os.ReadFile(log)
	if want := "TestSkipLog/x: php-fpm is not installed\nTestSkipLog/x#01: thin: no ruby\n"; err != nil || string(data) != want {
		t.Errorf("skip log %q (%v), want %q", data, err, want)
	}
}
