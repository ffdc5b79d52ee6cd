package sweep_test

// The helpers of the tests that run a whole sweep through the package's
// API, as the sweep command wires it: plan.SweepOptions.Build (the series
// and the configuration, built from the options a command line gives:
// plan is above sweep and imported here only to build the input),
// CheckSockets, Run, Unreachable, Judge, Config.Document and
// TrialsDocument, then the renderers of internal/report and
// internal/report/page on the saved form (to check what the command
// prints and writes of a live sweep).

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"image/png"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/report/page"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// sweepDocOptions are the options of a sweep as the command's flags give
// them with nothing but -n (requests per level), -c (levels) and the
// series' arguments: plan.Defaults for the load, keep-alive off.
func sweepDocOptions(n int64, levels string, args ...string) plan.SweepOptions {
	l := plan.Defaults("")
	l.Requests, l.RequestsSet = n, true
	return plan.SweepOptions{Load: l, Args: args, Levels: levels}
}

// sweepDocTrials is the trials' plan of --repeat repeat --seed seed, with
// the default noise threshold (2%).
func sweepDocTrials(t *testing.T, repeat int, seed uint64) *trials.Plan {
	t.Helper()
	p, err := trials.Options{Repeat: repeat, RepeatSet: true, MaxRepeat: trials.DefaultMaxRepeat, Seed: seed, SeedSet: seed != 0}.Build()
	if err != nil {
		t.Fatal(err)
	}
	p.Noise = 0.02
	return &p
}

// sweepDocRun is a sweep run through the package's API.
type sweepDocRun struct {
	// plan is the built sweep.
	plan *plan.Sweep
	// sw is the saved form of the sweep (sweep.json), nil when no
	// series could reach its target.
	sw *document.Sweep
	// text is what the sweep command prints on stdout: its title, the
	// trials' plan, the table, the comparisons and the objectives' lines.
	text string
	// warnings are the series that could not reach their targets, before
	// the run (CheckSockets) and after it (Unreachable); unreachable
	// says that none could.
	warnings    []string
	unreachable bool
}

// runSweepDoc builds so, runs the sweep (with tp's trials when not nil)
// and makes its saved form and its text, as the sweep command does; an
// error of Build or Run fails the test.
func runSweepDoc(t *testing.T, so plan.SweepOptions, tp *trials.Plan) sweepDocRun {
	t.Helper()
	p, err := so.Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	r := sweepDocRun{plan: p}
	if tp != nil && tp.Until != "" {
		tp.Pairs = sweep.PlanPairs(p.Series, p.Backends, p.Baseline)
	}
	errs, all := sweep.CheckSockets(p.Series)
	for _, err := range errs {
		r.warnings = append(r.warnings, err.Error())
	}
	if all {
		r.unreachable = true
		return r
	}
	cfg := p.Config
	cfg.Options = execute.Options{Stderr: io.Discard, Quiet: true, Verbosity: so.Load.Verbosity, Version: "test"}
	var short sweep.ShortTrials
	if tp != nil {
		cfg.Trials = tp
		cfg.OnTrial = func(tr driver.Trial) { short.Add(p.Series[tr.Series].Label, tr.Summary) }
	}
	res, err := sweep.Run(context.Background(), cfg, p.Series)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	notes := res.Notes
	if n := short.Note(); n != "" {
		notes = append(notes, n)
	}
	errs, all = sweep.Unreachable(res, p.Series)
	for _, err := range errs {
		r.warnings = append(r.warnings, err.Error())
	}
	if all {
		r.unreachable = true
		return r
	}
	judged := sweep.Judge(res.Series, p.Objectives)
	sw := cfg.Document(p.Series, p.Backends, res)
	judged.Mark(&sw)
	if tp != nil {
		sw.SweepTrials = sweep.TrialsDocument(*tp, tp.Noise, p.Baseline, res.Series, p.Backends, notes, res.Until)
	}
	r.sw = &sw
	var out bytes.Buffer
	width := report.DefaultWidth
	fmt.Fprintln(&out, report.Wrap(report.SweepTitle(&sw), width, "  "))
	if tp != nil {
		fmt.Fprintln(&out, report.Wrap(tp.Describe(true), width, "  "))
	}
	fmt.Fprintln(&out)
	if err := report.SweepTableFit(&out, &sw, width); err != nil {
		t.Fatal(err)
	}
	if err := report.Comparisons(&out, sw.SweepTrials, width); err != nil {
		t.Fatal(err)
	}
	for _, l := range judged.Lines {
		fmt.Fprintln(&out, report.Wrap(l, width, "    "))
	}
	r.text = out.String()
	return r
}

// sweepDocFiles renders what the sweep command writes of sw (sweep.json,
// sweep.csv, sweep.png, sweep.svg and sweep.html) and checks each, as
// the command's tests read the files: the JSON round-trips, the CSV has
// its header and the listen queue's counters on loopback TCP series
// only, the PNG has a panel per figure shown, the SVG and the page name
// every series. It returns the CSV rows, header first.
func sweepDocFiles(t *testing.T, sw *document.Sweep) [][]string {
	t.Helper()
	var js bytes.Buffer
	if err := document.Write(&js, sw); err != nil {
		t.Fatal(err)
	}
	var back report.Sweep
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("sweep.json: %v", err)
	}
	var again bytes.Buffer
	if err := document.Write(&again, &back); err != nil || !bytes.Equal(again.Bytes(), js.Bytes()) {
		t.Errorf("sweep.json does not round-trip (%v)", err)
	}
	var cb bytes.Buffer
	if err := report.SweepCSV(&cb, sw); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cb).ReadAll()
	if err != nil || len(rows) == 0 || !reflect.DeepEqual(rows[0], report.SweepCSVHeader) {
		t.Fatalf("sweep.csv: %v %v", err, rows)
	}
	network := map[string]string{}
	for _, se := range sw.Series {
		network[se.Label] = se.Target.Network
	}
	col := slices.Index(report.SweepCSVHeader, "listen_overflows")
	for _, r := range rows[1:] {
		if got, tcp := r[col] != "", network[r[0]] == "tcp"; got != tcp {
			t.Errorf("series %q (%s), level %s: listen_overflows %q", r[0], network[r[0]], r[1], r[col])
		}
	}
	var pb bytes.Buffer
	if err := report.SweepChart(&pb, sw, "png"); err != nil {
		t.Fatal(err)
	}
	failed, backend := false, false
	for _, se := range sw.Series {
		for _, l := range se.Levels {
			failed = failed || l.Failed > 0                                  // the failure-ratio panel
			backend = backend || (l.Backend != nil && l.Backend.Samples > 0) // the backend's CPU and memory panels
		}
	}
	height := report.ChartHeightPx
	if failed {
		height += report.PanelHeightPx
	}
	if backend {
		height += 2 * report.PanelHeightPx
	}
	if img, err := png.Decode(&pb); err != nil {
		t.Errorf("sweep.png: %v", err)
	} else if b := img.Bounds(); b.Dx() != report.ChartWidthPx || b.Dy() != height {
		t.Errorf("sweep.png is %v, want %dx%d", b, report.ChartWidthPx, height)
	}
	var sb bytes.Buffer
	if err := report.SweepChart(&sb, sw, "svg"); err != nil {
		t.Fatal(err)
	}
	var root struct{ XMLName xml.Name }
	if err := xml.Unmarshal(sb.Bytes(), &root); err != nil || root.XMLName.Local != "svg" {
		t.Errorf("sweep.svg: %v %v", err, root.XMLName)
	}
	for _, se := range sw.Series {
		if !bytes.Contains(sb.Bytes(), []byte(se.Label)) {
			t.Errorf("sweep.svg has no legend entry %q", se.Label)
		}
	}
	var hb bytes.Buffer
	if err := page.WriteOwn(&hb, sw, "sweep.json", "sweep", false); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(hb.Bytes(), []byte("<!DOCTYPE html>")) || !bytes.Contains(hb.Bytes(), []byte("requests per second against concurrency")) {
		t.Errorf("sweep.html is not the sweep's page (%d bytes)", hb.Len())
	}
	for _, se := range sw.Series {
		if !bytes.Contains(hb.Bytes(), []byte(html.EscapeString(se.Label))) {
			t.Errorf("sweep.html does not name series %q", se.Label)
		}
	}
	return rows
}

// sweepDocNotesHave reports whether a note contains word.
func sweepDocNotesHave(notes []string, word string) bool {
	for _, n := range notes {
		if strings.Contains(n, word) {
			return true
		}
	}
	return false
}

// sweepDocWarmup is --warmup n.
func sweepDocWarmup(so *plan.SweepOptions, n int64) {
	so.Warmup, so.WarmupSet = n, true
}
