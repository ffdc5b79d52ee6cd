package fcgi

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yookoala/gofast"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/realbackend"
)

// response is what a client saw of one response.
type response struct {
	status  int
	headers []string // "Name: value", canonical names, sorted, Status left out
	body    int64
}

// viaOurs sends cfg's request with our client and reads the response head
// from its verbose output.
func viaOurs(t *testing.T, cfg Config) response {
	t.Helper()
	var v bytes.Buffer
	cfg.Verbose = &v
	c := newClient(t, nil, cfg)
	var r load.Result
	c.Do(&r)
	if r.Class != load.OK {
		t.Fatalf("our client: %v %v", r.Class, r.Err)
	}
	var hs []string
	for _, line := range strings.Split(v.String(), "\n") {
		line, ok := strings.CutPrefix(line, "< ")
		if !ok {
			continue
		}
		name, value, _ := strings.Cut(line, ":")
		name = http.CanonicalHeaderKey(strings.TrimSpace(name))
		if name == "Status" {
			continue
		}
		hs = append(hs, name+": "+strings.TrimSpace(value))
	}
	sort.Strings(hs)
	return response{status: r.Status, headers: hs, body: r.BodyBytes}
}

// viaGofast sends the same params and body with gofast, an independent
// FastCGI client, and returns its view and the body it read.
func viaGofast(t *testing.T, cfg Config) (response, []byte) {
	t.Helper()
	client, err := gofast.SimpleClientFactory(gofast.SimpleConnFactory(cfg.Target.Network, cfg.Target.Address))()
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	req := gofast.NewRequest(nil)
	for _, p := range Params(cfg) {
		req.Params[p[0]] = p[1]
	}
	req.Stdin = io.NopCloser(bytes.NewReader(cfg.Body))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- resp.WriteTo(rec, &stderr) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("gofast: %v (stderr %q)", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("gofast did not finish in 10 s")
	}
	var hs []string
	for k, vs := range rec.Header() {
		for _, v := range vs {
			hs = append(hs, k+": "+v)
		}
	}
	sort.Strings(hs)
	return response{status: rec.Code, headers: hs, body: int64(rec.Body.Len())}, rec.Body.Bytes()
}

func TestSameAsGofastFixture(t *testing.T) {
	for _, network := range networks {
		for _, tc := range []struct {
			path   string
			status int
			body   int
		}{{"/index.php", 200, 0}, {"/index.php", 404, 70000}, {"/params", 200, 0}} {
			t.Run(network+tc.path+"/"+strconv.Itoa(tc.status), func(t *testing.T) {
				srv := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{Status: tc.status, BodyBytes: tc.body})
				cfg := Config{Target: target(t, srv.URL(tc.path)), Headers: [][2]string{{"X-Test", "1"}}, Body: []byte("abc"), Method: "POST"}
				ours := viaOurs(t, cfg)
				ref, body := viaGofast(t, cfg)
				if !reflect.DeepEqual(ours, ref) {
					t.Errorf("ours %+v\ngofast %+v", ours, ref)
				}
				if ours.status != tc.status {
					t.Errorf("status %d, want %d", ours.status, tc.status)
				}
				if tc.path == "/params" && !bytes.Contains(body, []byte("HTTP_X_TEST=1\n")) {
					t.Errorf("params body lacks HTTP_X_TEST:\n%s", body)
				}
			})
		}
	}
}

func TestPHPFPM(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			fpm := realbackend.PHPFPM(t, network)
			for _, keep := range []bool{true, false} {
				for _, tc := range []struct {
					script string
					status int
					body   string
				}{
					{realbackend.HelloScript, 200, realbackend.HelloBody},
					{realbackend.NotFoundScript, 404, realbackend.NotFoundBody},
				} {
					t.Run(tc.script+"/keep="+strconv.FormatBool(keep), func(t *testing.T) {
						cfg := Config{Target: target(t, fpm.URL(tc.script)), DocumentRoot: fpm.DocRoot, KeepAlive: keep, Timeout: 10 * time.Second}
						c := newClient(t, nil, cfg)
						for i := 0; i < 5; i++ {
							var r load.Result
							c.Do(&r)
							if r.Class != load.OK {
								t.Fatalf("request %d: %v %v", i, r.Class, r.Err)
							}
							if r.Status != tc.status || r.BodyBytes != int64(len(tc.body)) {
								t.Errorf("status %d body %d, want %d and %d", r.Status, r.BodyBytes, tc.status, len(tc.body))
							}
							if r.KeepAlive != keep || r.Dialed != (i == 0 || !keep) {
								t.Errorf("request %d: KeepAlive %v Dialed %v with keep-alive %v", i, r.KeepAlive, r.Dialed, keep)
							}
							if r.Reconnects != 0 {
								t.Errorf("request %d: %d reconnects", i, r.Reconnects)
							}
						}
						ours := viaOurs(t, cfg)
						ref, body := viaGofast(t, cfg)
						if !reflect.DeepEqual(ours, ref) {
							t.Errorf("ours %+v\ngofast %+v", ours, ref)
						}
						if string(body) != tc.body {
							t.Errorf("gofast read body %q, want %q", body, tc.body)
						}
					})
				}
			}
			t.Run("params", func(t *testing.T) {
				cfg := Config{Target: target(t, fpm.URL(realbackend.ServerScript+"?q=1")), DocumentRoot: fpm.DocRoot, Method: "POST",
					Headers: [][2]string{{"X-Bench", "yes"}}, Body: []byte("12345"), ContentType: "text/plain",
					Params: [][2]string{{"APP_MODE", "bench"}}}
				body := string(rawBody(t, cfg))
				for _, want := range []string{
					"SCRIPT_FILENAME=" + fpm.DocRoot + realbackend.ServerScript + "\n",
					"QUERY_STRING=q=1\n",
					"REQUEST_METHOD=POST\n",
					"HTTP_X_BENCH=yes\n",
					"APP_MODE=bench\n",
					"CONTENT_LENGTH=5\n",
					"STDIN=5\n",
				} {
					if !strings.Contains(body, want) {
						t.Errorf("php saw no %q in:\n%s", want, body)
					}
				}
			})
		})
	}
}
