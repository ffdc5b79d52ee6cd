package execute

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// TestRunKeepsOneSummary: Run returns the run's record with its summary,
// derived once; it is what deriving it from the finished record gives
// (the notes added after it was derived included: here every response is
// a 404, which adds a response note).
func TestRunKeepsOneSummary(t *testing.T) {
	for _, tc := range []struct {
		proto, network string
		status         int
	}{
		{fixtures.ProtoHTTP, "tcp", 0},
		{fixtures.ProtoHTTP, "unix", 404},
		{fixtures.ProtoFCGI, "tcp", 404},
		{fixtures.ProtoFCGI, "unix", 0},
	} {
		t.Run(tc.proto+"/"+tc.network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if tc.network == "unix" {
				addr = filepath.Join(t.TempDir(), "b.sock")
			}
			srv, err := fixtures.Start(tc.proto, tc.network, addr, fixtures.Options{BodyBytes: 5, Status: tc.status})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			tgt, err := sockets.ParseTarget(srv.URL("/x.php"))
			if err != nil {
				t.Fatal(err)
			}
			run, err := Run(context.Background(), &Plan{Shape: stats.Shape{Concurrency: 2, Requests: 20}, Target: tgt, Timeout: 10 * time.Second},
				Options{Quiet: true})
			if err != nil {
				t.Fatal(err)
			}
			m, got := run.Record, run.Summary
			if want := stats.SummaryOf(m); !reflect.DeepEqual(got, want) {
				t.Errorf("the kept summary differs from the record's:\n%+v\n%+v", got, want)
			}
			if got.Complete != 20 || !reflect.DeepEqual(got.Notes, m.Notes) {
				t.Errorf("complete %d, notes %q, record's %q", got.Complete, got.Notes, m.Notes)
			}
			if noted := strings.Contains(strings.Join(got.Notes, "\n"), "every response was non-2xx"); noted != (tc.status == 404) {
				t.Errorf("status %d: notes %q", tc.status, got.Notes)
			}
		})
	}
}
