// Command bareloop is the ceiling line of make bench's FastCGI pairs: the
// least a Go client can do per request. C goroutines, each with one kept
// connection, send backbench's own pre-encoded request (the same params,
// FCGI_KEEP_CONN) and read records up to END_REQUEST with the same raw
// socket reads (sockets.RawIO), for a fixed time, and count. No clock is
// read, nothing is recorded, no deadline is set: what backbench measures and
// checks on top of this loop is its overhead. With -nokeep the request goes
// without FCGI_KEEP_CONN on a new connection each time, dialed as backbench
// dials (sockets.Dialer.DialDeadline: its own socket) and closed as it
// closes it (after the server's close, sockets.RawIO.CloseAfterPeer): the
// connect-per-request line. It prints "requests N", "failed N" and
// "Requests/sec X".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/sockets"
)

func main() {
	network := flag.String("network", "tcp", "tcp or unix")
	addr := flag.String("addr", "127.0.0.1:9000", "host:port or socket path")
	root := flag.String("root", "/var/www/html", "DOCUMENT_ROOT")
	path := flag.String("path", "/index.php", "request path")
	conc := flag.Int("c", 4, "connections")
	dur := flag.Duration("d", 5*time.Second, "duration")
	nokeep := flag.Bool("nokeep", false, "no FCGI_KEEP_CONN: a new connection per request")
	flag.Parse()

	tg := sockets.Target{Scheme: sockets.SchemeFCGI, Network: *network, Address: *addr, Host: "localhost", Path: *path}
	req := fcgi.EncodeRequest(fcgi.Config{Target: tg, Method: "GET", DocumentRoot: *root, KeepAlive: !*nokeep})
	dialer := sockets.NewDialer(tg, 5*time.Second)
	var ok, failed atomic.Int64
	stop := time.Now().Add(*dur)
	start := time.Now()
	var wg sync.WaitGroup
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64<<10)
			for time.Now().Before(stop) {
				conn, err := dialer.DialDeadline(context.Background(), time.Time{}) // backbench's raw dial
				if err != nil {
					failed.Add(1)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				var io sockets.RawIO
				io.Reset(conn)
				if *nokeep {
					if err := roundTrip(&io, req, buf); err != nil {
						failed.Add(1)
						conn.Close()
						continue
					}
					ok.Add(1)
					io.CloseAfterPeer(buf)
					continue
				}
				for time.Now().Before(stop) {
					if err := roundTrip(&io, req, buf); err != nil {
						failed.Add(1)
						break
					}
					ok.Add(1)
				}
				conn.Close()
			}
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	fmt.Printf("requests %d\nfailed %d\nRequests/sec %.2f\n", ok.Load(), failed.Load(), float64(ok.Load())/el)
	if ok.Load() == 0 {
		os.Exit(1)
	}
}

// roundTrip writes req and reads records until END_REQUEST.
func roundTrip(io *sockets.RawIO, req, buf []byte) error {
	if _, err := io.Write(req); err != nil {
		return err
	}
	r, w := 0, 0
	for {
		for w-r < fcgi.HeaderLen {
			if r > 0 {
				w = copy(buf, buf[r:w])
				r = 0
			}
			n, err := io.Read(buf[w:])
			if err != nil {
				return err
			}
			w += n
		}
		h, err := fcgi.ParseHeader(buf[r:w])
		if err != nil {
			return err
		}
		skip := fcgi.HeaderLen + int(h.ContentLength) + int(h.PaddingLength)
		for w-r < skip {
			r, skip = 0, skip-(w-r)
			n, err := io.Read(buf)
			if err != nil {
				return err
			}
			w = n
		}
		r += skip
		if h.Type == fcgi.TypeEndRequest {
			if r != w {
				return errors.New("bytes after END_REQUEST")
			}
			return nil
		}
	}
}
