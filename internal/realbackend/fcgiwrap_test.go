package realbackend

import (
	"bytes"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFCGIWrap(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			var pid int
			t.Run("serve", func(t *testing.T) {
				w := StartFCGIWrap(t, network)
				pid = w.PID
				if w.Network != network || !strings.HasSuffix(w.URL(CGIHelloScript), CGIHelloScript) {
					t.Errorf("FCGIWrap %+v URL %q", w, w.URL(CGIHelloScript))
				}
				c, err := net.Dial(network, w.Addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.Write(fcgiRequest(w.DocRoot + CGIHelloScript)); err != nil {
					t.Fatal(err)
				}
				// Without FCGI_KEEP_CONN fcgiwrap closes after the response.
				resp, err := io.ReadAll(c)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(resp, []byte("\r\n\r\n"+CGIHelloBody)) {
					t.Errorf("response %q lacks the hello body", resp)
				}
			})
			if pid == 0 {
				return
			}
			// The cleanup of the subtest stopped fcgiwrap and its children.
			if err := syscall.Kill(-pid, 0); err == nil {
				t.Errorf("fcgiwrap's process group %d still runs after the test", pid)
			}
		})
	}
}
