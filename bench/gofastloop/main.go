// Command gofastloop is the peer of backbench's FastCGI client in make bench:
// C goroutines, each with one github.com/yookoala/gofast client (one
// connection, FCGI_KEEP_CONN set), send the same request in a loop for a
// fixed time and count the responses. It prints "requests N", "failed N" and
// "Requests/sec X".
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yookoala/gofast"
)

func main() {
	network := flag.String("network", "tcp", "tcp or unix")
	addr := flag.String("addr", "127.0.0.1:9000", "host:port or socket path")
	script := flag.String("script", "/var/www/html/index.php", "SCRIPT_FILENAME")
	conc := flag.Int("c", 10, "concurrent clients")
	dur := flag.Duration("d", 5*time.Second, "duration")
	flag.Parse()

	var ok, failed atomic.Int64
	deadline := time.Now().Add(*dur)
	start := time.Now()
	var wg sync.WaitGroup
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var client gofast.Client
			for time.Now().Before(deadline) {
				if client == nil {
					c, err := gofast.SimpleClientFactory(gofast.SimpleConnFactory(*network, *addr))()
					if err != nil {
						failed.Add(1)
						time.Sleep(10 * time.Millisecond)
						continue
					}
					client = c
				}
				req := gofast.NewRequest(nil)
				req.KeepConn = true
				req.Params["REQUEST_METHOD"] = "GET"
				req.Params["SCRIPT_FILENAME"] = *script
				req.Params["SCRIPT_NAME"] = (*script)[strings.LastIndexByte(*script, '/'):]
				req.Params["SERVER_PROTOCOL"] = "HTTP/1.1"
				req.Params["GATEWAY_INTERFACE"] = "CGI/1.1"
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					client.Close()
					client = nil
					continue
				}
				rec := httptest.NewRecorder()
				if err := resp.WriteTo(rec, io.Discard); err != nil || rec.Code != 200 {
					failed.Add(1)
					client.Close()
					client = nil
					continue
				}
				ok.Add(1)
			}
			if client != nil {
				client.Close()
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
