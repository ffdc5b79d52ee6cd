package plan

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
)

// TestMixTruth runs a targets file of paths only against built-in
// backends (HTTP and FastCGI, TCP and Unix) whose paths have delays of
// their own and which count what they receive: each target's count is
// its share within one, the counts add up to the run's, each target's
// p50 sits near its path's delay, POST bodies arrive byte-exact, and
// FastCGI's SCRIPT_FILENAME is the document root joined with each path.
func TestMixTruth(t *testing.T) {
	dir := t.TempDir()
	body := []byte("name=v%C3%A9&x=1\n\x00\xff binary tail")
	if err := os.WriteFile(filepath.Join(dir, "body.bin"), body, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "targets.txt")
	src := "GET /fast\n# weight: 3\n\nGET /slow?q=1\nX-Mix: yes\n\nPOST /post\nContent-Type: application/x-www-form-urlencoded\n@body.bin\n# weight: 2\n"
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	delays := map[string]time.Duration{"/fast": 2 * time.Millisecond, "/slow": 20 * time.Millisecond, "/post": 8 * time.Millisecond}
	shares := map[string]float64{"GET /fast": 3.0 / 6, "GET /slow": 1.0 / 6, "POST /post": 2.0 / 6}
	labels := map[string]string{"GET /fast": "GET /fast", "GET /slow": "GET /slow?q=1", "POST /post": "POST /post"}
	const n = 301
	for _, proto := range []string{fixtures.ProtoHTTP, fixtures.ProtoFCGI} {
		for _, network := range []string{"tcp", "unix"} {
			t.Run(proto+"/"+network, func(t *testing.T) {
				tally := &fixtures.Tally{}
				srv := fixtures.StartTB(t, proto, network, fixtures.Options{BodyBytes: 10, PathDelays: delays, Tally: tally})
				o := Defaults(srv.URL("/"))
				o.Requests, o.RequestsSet, o.Concurrency, o.KeepAlive, o.Targets = n, true, 4, true, file
				if proto == fixtures.ProtoFCGI {
					o.DocumentRoot = dir
				}
				l, err := o.Build()
				if err != nil {
					t.Fatal(err)
				}
				run, err := execute.Run(context.Background(), l.Plan, execute.Options{Discard: true})
				if err != nil {
					t.Fatal(err)
				}
				s := run.Summary
				if s.Complete != n || s.Failed != 0 {
					t.Fatalf("complete %d failed %d", s.Complete, s.Failed)
				}
				seen := tally.Snapshot()
				var sum int64
				for _, ts := range s.Targets {
					sum += ts.Requests
				}
				if sum != n || len(s.Targets) != 3 {
					t.Fatalf("targets %+v add up to %d, want %d", s.Targets, sum, n)
				}
				for key, share := range shares {
					got := seen[key]
					if d := float64(got.N) - share*n; math.Abs(d) > 1 {
						t.Errorf("%s: the server saw %d, share %.1f", key, got.N, share*n)
					}
					var ts *struct {
						req int64
						p50 float64
					}
					for _, x := range s.Targets {
						if x.Target == labels[key] {
							ts = &struct {
								req int64
								p50 float64
							}{x.Requests, x.P50Ms}
						}
					}
					if ts == nil {
						t.Fatalf("%s: no figures in %+v", key, s.Targets)
					}
					if ts.req != got.N {
						t.Errorf("%s: %d requests reported, %d seen by the server", key, ts.req, got.N)
					}
					path := strings.Fields(key)[1]
					d := float64(delays[path]) / 1e6
					// Generous: the delay is a floor; a loaded machine adds
					// to it, never takes away.
					if ts.p50 < d*0.98 || ts.p50 > d+25 {
						t.Errorf("%s: p50 %.2f ms, delay %.0f ms", key, ts.p50, d)
					}
					if proto == fixtures.ProtoFCGI {
						want := filepath.Join(dir, path)
						if len(got.ScriptFilenames) != 1 || got.ScriptFilenames[want] != got.N {
							t.Errorf("%s: SCRIPT_FILENAME %v, want %s", key, got.ScriptFilenames, want)
						}
					}
				}
				post := seen["POST /post"]
				if sum := sha256.Sum256(body); len(post.Bodies) != 1 || post.Bodies[sum] != post.N {
					t.Errorf("POST bodies: %d distinct, %d exact of %d", len(post.Bodies), post.Bodies[sha256.Sum256(body)], post.N)
				}
				if get := seen["GET /fast"]; get.Bodies[sha256.Sum256(nil)] != get.N {
					t.Errorf("GET /fast carried a body")
				}
				if len(seen) != 3 {
					t.Errorf("the server saw %v", fmt.Sprint(len(seen)))
				}
			})
		}
	}
}

// TestMixErrors: a bad targets file is a usage error naming FILE:LINE,
// and the flags that would contradict the file are refused.
func TestMixErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "t.txt")
	if err := os.WriteFile(file, []byte("GET /a\n\nGET http://other.example:81/b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Defaults("http://127.0.0.1:1/")
	o.Targets = file
	if _, err := o.Build(); err == nil || !strings.HasPrefix(err.Error(), file+":3: http://other.example:81/b is not on the command line's target") {
		t.Errorf("other host: %v", err)
	}
	o.Targets, o.Method = file, "POST"
	if _, err := o.Build(); err == nil || !strings.Contains(err.Error(), "drop -i and -m") {
		t.Errorf("-m: %v", err)
	}
	o = Defaults("http://127.0.0.1:1/")
	o.Targets = "-"
	o.Stdin = func() ([]byte, error) { return []byte("GET /x\n# weight: -1\n"), nil }
	if _, err := o.Build(); err == nil || err.Error() != `stdin:2: bad weight "-1": want a whole number from 1 to 10000` {
		t.Errorf("stdin: %v", err)
	}
}
