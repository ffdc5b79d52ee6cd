package plan_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/plan"
)

// TestSweepOptionsErrors holds the sweep's rules on its levels, series,
// keep-alive modes, warm-up and backend processes to their words, as the
// sweep command's users read them: each case is a usage error (*Error),
// found by Build before any connection to a live target. (The flags'
// own errors, a sweep without a URL or with a bad --stop-error-rate, are
// cmd/backbench's TestSweepUsage.)
func TestSweepOptionsErrors(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	u := srv.URL("/")
	plain := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	for _, tc := range []struct {
		name string
		set  func(o *plan.SweepOptions)
		err  string
	}{
		{"no levels", func(o *plan.SweepOptions) { o.Levels = "" }, "--concurrency SPEC is required"},
		{"bad spec", func(o *plan.SweepOptions) { o.Levels = "4,2" }, "levels must increase"},
		{"zero level", func(o *plan.SweepOptions) { o.Levels = "0:10:2" }, "bad level"},
		{"n below the top level", func(o *plan.SweepOptions) { o.Load.Requests, o.Levels = 10, "1:20:5" }, "-n 10 is less than the highest level 20"},
		{"-k and off", func(o *plan.SweepOptions) { o.Load.KeepAlive, o.KeepAliveModes = true, "off" }, "contradict"},
		{"bad keepalive modes", func(o *plan.SweepOptions) { o.KeepAliveModes = "sometimes" }, "want on, off, or on,off"},
		{"keepalive modes twice", func(o *plan.SweepOptions) { o.KeepAliveModes = "on,on" }, "bad --keepalive-modes"},
		{"keepalive with a mode", func(o *plan.SweepOptions) { o.Load.KeepAlive, o.Args = true, []string{"on", u} }, "--keepalive takes no value, --keepalive-modes on does"},
		{"negative warmup", func(o *plan.SweepOptions) { o.Warmup, o.WarmupSet = -1, true }, "--warmup -1"},
		{"empty label", func(o *plan.SweepOptions) { o.Args = []string{"=" + u} }, "empty label"},
		{"same label", func(o *plan.SweepOptions) { o.Args = []string{"a=" + u, "a=" + u} }, `two series are labelled "a"`},
		{"bad URL", func(o *plan.SweepOptions) { o.Args = []string{"ftp://x/"} }, ""},
		{"insecure without https", func(o *plan.SweepOptions) {
			o.Load.Insecure, o.Args = true, []string{"plain=" + plain.URL("/"), "other=" + plain.URL("/x")}
		}, "--insecure applies to https:// targets only"},
		{"backend of no series", func(o *plan.SweepOptions) { o.BackendPIDs, o.Args = []string{"c=1"}, []string{"a=" + u} }, `"c"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := plan.Defaults("")
			l.Requests, l.RequestsSet = 1000, false
			o := plan.SweepOptions{Load: l, Args: []string{u}, Levels: "1"}
			tc.set(&o)
			before, beforePlain := srv.Accepted(), plain.Accepted()
			_, err := o.Build()
			var pe *plan.Error
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v; want a usage error of one line with %q", err, tc.err)
			}
			if srv.Accepted() != before || plain.Accepted() != beforePlain {
				t.Error("a usage error connected to the target")
			}
		})
	}
}
