package execute_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/stats"
)

// The credentials of TestCredentialsInRecord, each given one way.
const (
	credBearer = "Zq7bearerTOKEN"
	credCookie = "Zq7cookieHDR"
	credBasic  = "Zq7basicPASS"
	credC      = "Zq7cookieFLAG"
	credParam  = "Zq7paramPASS"
)

// credFound returns the credentials (and the base64 of -A's) found in b.
func credFound(b []byte) []string {
	var found []string
	for _, s := range []string{credBearer, credCookie, credBasic, credC, credParam,
		base64.StdEncoding.EncodeToString([]byte("user:" + credBasic))} {
		if bytes.Contains(b, []byte(s)) {
			found = append(found, s)
		}
	}
	return found
}

// credRun runs po with its record's privacy and command line args (set
// as os.Args while it runs: the record keeps the command line typed) and
// returns the run's JSON (document.Write, bench --format json) and what
// it wrote on stderr.
func credRun(t *testing.T, po plan.Options, args []string, privacy stats.Privacy) (string, string) {
	t.Helper()
	ld, err := po.Build()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Args
	os.Args = args
	defer func() { os.Args = saved }()
	var stderr bytes.Buffer
	run, err := execute.Run(context.Background(), ld.Plan, execute.Options{Stderr: &stderr, Quiet: true, Verbosity: po.Verbosity,
		Version: "test", Privacy: privacy})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := document.Write(&out, &document.Run{Summary: &run.Summary, Record: run.Record}); err != nil {
		t.Fatal(err)
	}
	return out.String(), stderr.String()
}

// TestCredentialsInRecord gives a credential five ways (-H
// Authorization, -H Cookie glued, -A, -C and, over FastCGI, --param
// DB_PASSWORD=) against both built-in backends: the run's record, with
// its command line, holds none of them and says REDACTED; with
// KeepSecrets (--keep-secrets, for a private file) it keeps them; and
// with verbosity 2 the requests sent carry them all (-A's in base64).
// The files and outputs of every command made from such runs are
// checked in cmd/backbench (TestNoCredentialInResults). It runs once: it
// tests the record, not the load path.
func TestCredentialsInRecord(t *testing.T) {
	if os.Getenv(execute.EngineEnv) != "" {
		t.Skip("runs once, with the default engine: it tests the record, not the load path")
	}
	for _, proto := range []string{fixtures.ProtoHTTP, fixtures.ProtoFCGI} {
		t.Run(proto, func(t *testing.T) {
			srv := fixtures.StartTB(t, proto, "tcp", fixtures.Options{BodyBytes: 64})
			url := srv.URL("/x")
			sec := []string{"-H", "Authorization: Bearer " + credBearer, "-HCookie:sid=" + credCookie,
				"-A", "user:" + credBasic, "--cookie=s=" + credC}
			po := plan.Defaults(url)
			po.Requests, po.RequestsSet, po.Concurrency = 20, true, 2
			po.Headers = []string{"Authorization: Bearer " + credBearer, "Cookie:sid=" + credCookie}
			po.BasicAuth, po.Cookies = "user:"+credBasic, []string{"s=" + credC}
			if proto == fixtures.ProtoFCGI {
				sec = append(sec, "--param", "DB_PASSWORD="+credParam)
				po.Params = []string{"DB_PASSWORD=" + credParam}
			}
			args := append(append([]string{"backbench", "bench", "-q", "-n", "20", "-c", "2"}, sec...), "--format", "json", url)

			js, _ := credRun(t, po, args, stats.Privacy{})
			if found := credFound([]byte(js)); len(found) > 0 {
				t.Errorf("the record holds %v", found)
			}
			if !strings.Contains(js, "REDACTED") || !strings.Contains(js, `"--cookie=s=REDACTED"`) {
				t.Errorf("the record has no REDACTED mark, or not in its command line")
			}

			kept := po
			kept.KeepSecrets = true
			js, _ = credRun(t, kept, append(args, "--keep-secrets"), stats.Privacy{KeepSecrets: true})
			if found := credFound([]byte(js)); len(found) < 4 {
				t.Errorf("KeepSecrets kept only %v of the credentials", found)
			}

			// The requests sent still carry the real credentials: every
			// one but -A's, which is sent in base64.
			v := po
			v.Requests, v.Concurrency, v.Verbosity = 1, 1, 2
			_, errs := credRun(t, v, args, stats.Privacy{})
			want := 4
			if proto == fixtures.ProtoFCGI {
				want = 5
			}
			if found := credFound([]byte(errs)); len(found) != want {
				t.Errorf("verbosity 2 shows %v sent, want every credential:\n%s", found, errs)
			}
		})
	}
}

// credLineRecorder is an HTTP backend on 127.0.0.1 that keeps the request
// line of every request it answers, to show what was sent on the wire.
type credLineRecorder struct {
	url   string
	mu    sync.Mutex
	lines []string
}

// startCredLineRecorder starts a credLineRecorder, stopped when the test
// ends.
func startCredLineRecorder(t *testing.T) *credLineRecorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &credLineRecorder{url: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.lines = append(r.lines, req.Method+" "+req.RequestURI+" "+req.Proto)
		r.mu.Unlock()
		w.Write([]byte("ok\n"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return r
}

// TestQueryCredentialInRecord gives a credential in a target's query
// string (?api_key=, ?access_token=): the run's record (its JSON) shows
// the parameter's name, REDACTED for its value and the other parameters'
// values, in the target's URL and document path, and holds the secret
// nowhere; the requests sent carry it (the backend's request lines). With
// KeepSecrets the record keeps it in both. It runs once: it tests the
// record, not the load path.
func TestQueryCredentialInRecord(t *testing.T) {
	if os.Getenv(execute.EngineEnv) != "" {
		t.Skip("runs once, with the default engine: it tests the record, not the load path")
	}
	for _, name := range []string{"api_key", "access_token"} {
		t.Run(name, func(t *testing.T) {
			srv := startCredLineRecorder(t)
			secret := "Qz8" + strings.ReplaceAll(name, "_", "") + "SECRET"
			url := srv.url + "/a?page=2&" + name + "=" + secret
			po := plan.Defaults(url)
			po.Requests, po.RequestsSet, po.Concurrency = 20, true, 2
			args := []string{"backbench", "bench", "-n", "20", "-c", "2", "-q", "--format", "json", url}
			js, errs := credRun(t, po, args, stats.Privacy{})
			if strings.Contains(js+errs, secret) {
				t.Errorf("the record or stderr holds %s", secret)
			}
			// (encoding/json writes "&" as \u0026.)
			for _, want := range []string{`"url": "` + srv.url + `/a?page=2\u0026` + name + `=REDACTED"`,
				`"document_path": "/a?page=2\u0026` + name + `=REDACTED"`} {
				if !strings.Contains(js, want) {
					t.Errorf("the record lacks %s", want)
				}
			}
			srv.mu.Lock()
			lines := append([]string(nil), srv.lines...)
			srv.mu.Unlock()
			if len(lines) < 20 {
				t.Fatalf("the backend received %d requests", len(lines))
			}
			for _, l := range lines {
				if !strings.Contains(l, name+"="+secret) {
					t.Fatalf("a request was sent without the credential: %q", l)
				}
			}

			kept := srv.url + "/k?" + name + "=" + secret
			ko := plan.Defaults(kept)
			ko.Requests, ko.RequestsSet, ko.KeepSecrets = 10, true, true
			js, _ = credRun(t, ko, []string{"backbench", "bench", "-q", "-n", "10", "--keep-secrets", "--format", "json", kept},
				stats.Privacy{KeepSecrets: true})
			for _, want := range []string{`"url": "` + kept + `"`, `"document_path": "/k?` + name + `=` + secret + `"`} {
				if !strings.Contains(js, want) {
					t.Errorf("KeepSecrets: the record lacks %s", want)
				}
			}
		})
	}
}
