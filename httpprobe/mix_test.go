package httpprobe

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/load"
)

// TestEncodeRequests: the requests packed into one buffer are each the
// bytes of BuildRequest, with the head of RequestHead and the HEAD flag of
// their method, back to back in their order.
func TestEncodeRequests(t *testing.T) {
	base := Config{Target: target(t, "http://127.0.0.1:8080/"), KeepAlive: true}
	mix := []Config{base, base, base, base}
	mix[0].Target.Path = "/a"
	mix[1].Target.Path, mix[1].Method = "/b", "HEAD"
	mix[2].Target.Path, mix[2].Method, mix[2].Body = "/c", "POST", []byte("x=1&y=2")
	mix[3].Target.Path, mix[3].Headers = "/d", [][2]string{{"X-Long", strings.Repeat("v", 300)}}
	q, err := encodeRequests(mix, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.at) != len(mix) {
		t.Fatalf("%d spans, want %d", len(q.at), len(mix))
	}
	end := uint32(0)
	for i, m := range mix {
		want, err := BuildRequest(m)
		if err != nil {
			t.Fatal(err)
		}
		head, _ := RequestHead(m)
		s := q.at[i]
		if s.start != end {
			t.Errorf("request %d starts at %d, want %d (right after the one before)", i, s.start, end)
		}
		end = s.end
		if got := q.buf[s.start:s.end]; !bytes.Equal(got, want) {
			t.Errorf("request %d:\n%q\nwant\n%q", i, got, want)
		}
		if got := string(q.buf[s.start:s.head]); got != head {
			t.Errorf("request %d: head %q, want %q", i, got, head)
		}
		if s.isHead != (m.Method == "HEAD") {
			t.Errorf("request %d: isHead %v", i, s.isHead)
		}
	}
	if int(end) != len(q.buf) || cap(q.buf) != len(q.buf) {
		t.Errorf("buffer of %d bytes (capacity %d), the requests end at %d", len(q.buf), cap(q.buf), end)
	}
}

// TestClientMixWire: on one kept connection, a client of a mix sends, for
// each Result's Target, exactly that request's bytes and its head to
// Verbose, and reads a HEAD request's response without a body: a bodyless
// response to a request taken for a GET would leave it waiting for the
// body until the timeout.
func TestClientMixWire(t *testing.T) {
	for _, nw := range networks {
		t.Run(nw, func(t *testing.T) {
			var mu sync.Mutex
			var got [][]byte
			tg := fakeServer(t, nw, func(c net.Conn) {
				br := bufio.NewReader(c)
				for {
					var req bytes.Buffer
					length, head := 0, false
					for {
						line, err := br.ReadString('\n')
						if err != nil {
							return
						}
						req.WriteString(line)
						if req.Len() == len(line) {
							head = strings.HasPrefix(line, "HEAD ")
						}
						if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
							length, _ = strconv.Atoi(strings.TrimSpace(v))
						}
						if line == "\r\n" {
							break
						}
					}
					if _, err := io.CopyN(&req, br, int64(length)); err != nil {
						return
					}
					mu.Lock()
					got = append(got, req.Bytes())
					mu.Unlock()
					resp := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"
					if !head {
						resp += "ok"
					}
					if _, err := c.Write([]byte(resp)); err != nil {
						return
					}
				}
			})
			base := Config{Target: tg, KeepAlive: true, Timeout: 2 * time.Second}
			var verbose writes
			cfg := base
			cfg.Verbose = &verbose
			for i, p := range []string{"/a", "/b", "/c"} {
				m := base
				m.Target.Path = p
				switch i {
				case 1:
					m.Method = "HEAD"
				case 2:
					m.Method, m.Body, m.ContentType = "POST", []byte("a=1&b=22"), "application/x-www-form-urlencoded"
				}
				cfg.Mix = append(cfg.Mix, m)
			}
			cl := newClient(t, context.Background(), cfg)
			order := []int{2, 0, 1, 1, 2, 0, 1}
			var r load.Result
			for k, i := range order {
				r.Reset()
				r.Target = i
				cl.Do(&r)
				if r.Class != load.OK || !r.KeepAlive || r.Dialed != (k == 0) {
					t.Fatalf("request %d (target %d): class %v err %v keep %v dialed %v", k, i, r.Class, r.Err, r.KeepAlive, r.Dialed)
				}
				want := int64(2)
				if i == 1 { // HEAD
					want = 0
				}
				if r.BodyBytes != want {
					t.Errorf("request %d (target %d): %d body bytes, want %d", k, i, r.BodyBytes, want)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != len(order) {
				t.Fatalf("the server read %d requests, want %d", len(got), len(order))
			}
			for k, i := range order {
				want, _ := BuildRequest(cfg.Mix[i])
				if !bytes.Equal(got[k], want) {
					t.Errorf("request %d (target %d) on the wire:\n%q\nwant\n%q", k, i, got[k], want)
				}
				head, _ := RequestHead(cfg.Mix[i])
				if 2*k >= len(verbose.w) || verbose.w[2*k] != head {
					t.Errorf("request %d (target %d): Verbose did not get its head %q", k, i, head)
				}
			}
		})
	}
}

// writes keeps every Write, one string each.
type writes struct{ w []string }

func (w *writes) Write(p []byte) (int, error) { w.w = append(w.w, string(p)); return len(p), nil }
