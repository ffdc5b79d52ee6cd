package fcgi

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/load"
)

// mixConfigs returns a mix of three requests on base: a GET, a POST with a
// body and a GET with a long header, on paths of their own.
func mixConfigs(base Config) []Config {
	mix := []Config{base, base, base}
	mix[0].Target.Path, mix[0].Target.RawQuery = "/a.php", "x=1"
	mix[1].Target.Path, mix[1].Method, mix[1].Body, mix[1].ContentType = "/b.php", "POST", []byte("a=1&b=22"), "application/x-www-form-urlencoded"
	mix[2].Target.Path, mix[2].Headers = "/c.php", [][2]string{{"X-Long", strings.Repeat("v", 300)}}
	return mix
}

// TestEncodeRequests: the requests packed into one buffer are each the
// bytes of EncodeRequest, back to back in their order, and their verbose
// forms those of verboseRequest, in a buffer of their own that stays
// empty without Verbose.
func TestEncodeRequests(t *testing.T) {
	mix := mixConfigs(Config{Target: target(t, "fcgi://127.0.0.1:9000/"), KeepAlive: true})
	for _, verbose := range []bool{false, true} {
		q, err := encodeRequests(mix, verbose)
		if err != nil {
			t.Fatal(err)
		}
		if len(q.at) != len(mix) {
			t.Fatalf("%d spans, want %d", len(q.at), len(mix))
		}
		end, vend := uint32(0), uint32(0)
		for i, m := range mix {
			s := q.at[i]
			if s.start != end || s.vstart != vend {
				t.Errorf("verbose %v, request %d: starts at %d and %d, want %d and %d (right after the one before)", verbose, i, s.start, s.vstart, end, vend)
			}
			end, vend = s.end, s.vend
			if got, want := q.buf[s.start:s.end], EncodeRequest(m); !bytes.Equal(got, want) {
				t.Errorf("verbose %v, request %d:\n%q\nwant\n%q", verbose, i, got, want)
			}
			want := ""
			if verbose {
				want = string(verboseRequest(m))
			}
			if got := string(q.vbuf[s.vstart:s.vend]); got != want {
				t.Errorf("verbose %v, request %d: verbose form %q, want %q", verbose, i, got, want)
			}
		}
		if int(end) != len(q.buf) || cap(q.buf) != len(q.buf) || int(vend) != len(q.vbuf) {
			t.Errorf("verbose %v: buffers of %d and %d bytes (capacity %d), the requests end at %d and %d", verbose, len(q.buf), len(q.vbuf), cap(q.buf), end, vend)
		}
	}
}

// TestClientMixWire: on one kept connection, a client of a mix sends, for
// each Result's Target, exactly that request's records, and its verbose
// form to Verbose.
func TestClientMixWire(t *testing.T) {
	reply := cat(stdout(okHead+"ok"), stdout(""), endRequest(StatusRequestComplete))
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			var mu sync.Mutex
			var got [][]byte
			srv := fixtures.StartRawTB(t, network, func(c net.Conn) {
				buf := make([]byte, MaxContent+MaxPadding)
				for {
					var raw bytes.Buffer
					tee := io.TeeReader(c, &raw)
					for {
						h, content, err := ReadRecord(tee, buf)
						if err != nil {
							return
						}
						if h.Type == TypeStdin && len(content) == 0 {
							break
						}
					}
					mu.Lock()
					got = append(got, raw.Bytes())
					mu.Unlock()
					if _, err := c.Write(reply); err != nil {
						return
					}
				}
			})
			var verbose writes
			base := Config{Target: target(t, srv.URL("fcgi", "/index.php")), KeepAlive: true, Timeout: 2 * time.Second}
			cfg := base
			cfg.Verbose = &verbose
			cfg.Mix = mixConfigs(base)
			c := newClient(t, nil, cfg)
			order := []int{1, 0, 2, 2, 1, 0, 1}
			var r load.Result
			for k, i := range order {
				r.Reset()
				r.Target = i
				c.Do(&r)
				if r.Class != load.OK || !r.KeepAlive || r.Dialed != (k == 0) || r.BodyBytes != 2 {
					t.Fatalf("request %d (target %d): class %v err %v keep %v dialed %v body %d", k, i, r.Class, r.Err, r.KeepAlive, r.Dialed, r.BodyBytes)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != len(order) {
				t.Fatalf("the server read %d requests, want %d", len(got), len(order))
			}
			for k, i := range order {
				if want := EncodeRequest(cfg.Mix[i]); !bytes.Equal(got[k], want) {
					t.Errorf("request %d (target %d) on the wire:\n%q\nwant\n%q", k, i, got[k], want)
				}
				want := string(verboseRequest(cfg.Mix[i]))
				if 2*k >= len(verbose.w) || verbose.w[2*k] != want {
					t.Errorf("request %d (target %d): Verbose did not get its request %q", k, i, want)
				}
			}
		})
	}
}

// writes keeps every Write, one string each.
type writes struct{ w []string }

func (w *writes) Write(p []byte) (int, error) { w.w = append(w.w, string(p)); return len(p), nil }
