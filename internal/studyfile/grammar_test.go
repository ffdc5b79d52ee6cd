package studyfile_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/studyfile"
)

// target is the URL of the command path's plans: nothing dials it.
const target = "http://127.0.0.1:9/"

// A grammarCase is one value written once on a command line and once in a
// study file.
type grammarCase struct {
	// what names the value: "slo", "concurrency", "duration", "timeout",
	// "confirm", "noise" or "memory".
	what, value string
	// ok is whether both accept it.
	ok bool
	// msg is the part of the message both must give when they refuse it
	// ("": the grammar function's own error).
	msg string
}

// grammarCases are the values of TestOneGrammar.
var grammarCases = []grammarCase{
	{"slo", "p99<=100ms", true, ""},
	{"slo", "p99.9<=1s", true, ""},
	{"slo", " max <= 2s ", true, ""},
	{"slo", "errors<=1%", true, ""},
	{"slo", "errors<=0%", true, ""},
	{"slo", "mean<=20ms", false, ""}, // capacity has no mean objective
	{"slo", "p95<=20ms", false, ""},
	{"slo", "p101<=1ms", false, ""},
	{"slo", "p99<100ms", false, ""},
	{"slo", "rps>=", false, ""},
	{"slo", "p99<=100", false, ""},
	{"slo", "p99<=0ms", false, ""},
	{"slo", "errors<=1", false, ""},
	{"slo", "errors<=101%", false, ""},
	{"concurrency", "1:500:10", true, ""},
	{"concurrency", "1,4,8", true, ""},
	{"concurrency", "16", true, ""},
	{"concurrency", " 1 , 2:4:1 ", true, ""},
	{"concurrency", "1:20000:1", false, ""}, // more than sweep's 10000 levels
	{"concurrency", "0", false, ""},
	{"concurrency", "-1", false, ""},
	{"concurrency", "5:1:1", false, ""},
	{"concurrency", "1:10:0", false, ""},
	{"concurrency", "1:10", false, ""},
	{"concurrency", "4,2", false, ""},
	{"concurrency", "1,,2", false, ""},
	{"concurrency", "x", false, ""},
	{"duration", "1s", true, ""},
	{"duration", "1h", true, ""},
	{"duration", "30", true, ""},
	{"duration", "2.5", true, ""},
	{"duration", "0s", true, ""}, // no time limit: -n alone bounds the run
	{"duration", "-1s", false, ""},
	{"duration", "-1", false, ""},
	{"duration", "1e10", false, ""},
	{"duration", "5 s", false, ""},
	{"timeout", "30s", true, ""},
	{"timeout", "5", true, ""},
	{"timeout", "0s", false, "must be greater than 0 seconds"},
	{"timeout", "-1s", false, ""},
	{"confirm", "30s", true, ""},
	{"confirm", "0", true, ""}, // no confirmation
	{"confirm", "-5s", false, ""},
	{"noise", "2%", true, ""},
	{"noise", "0.02", true, ""},
	{"noise", "0", true, ""},
	{"noise", "100%", false, ""},
	{"noise", "1", false, ""},
	{"noise", "-2%", false, ""},
	{"memory", "2GiB", true, ""},
	{"memory", "1500MB", true, ""},
	{"memory", "0", false, ""},
	{"memory", "lots", false, ""},
}

// TestOneGrammar walks every value of grammarCases through the command's
// path (the flag's own Value or reader, then the plan the command builds)
// and through the study file's parser (a study built around the value):
// both accept it or both refuse it, the study at the value's line and
// column, and a refusal carries the same message on both paths.
func TestOneGrammar(t *testing.T) {
	for _, tc := range grammarCases {
		t.Run(tc.what+" "+tc.value, func(t *testing.T) {
			cmdErr := commandPath(tc.what, tc.value)
			line, col, file := studyFile(tc.what, tc.value)
			_, studyErr := studyfile.Parse("g.yaml", []byte(file))
			if (cmdErr == nil) != tc.ok || (studyErr == nil) != tc.ok {
				t.Fatalf("want accepted %v by both; command: %v; study: %v\n%s", tc.ok, cmdErr, studyErr, file)
			}
			if tc.ok {
				return
			}
			var e *studyfile.Error
			if !errors.As(studyErr, &e) || e.Line != line || e.Col != col {
				t.Errorf("study error %v: want it at %d:%d", studyErr, line, col)
			}
			msg := tc.msg
			if msg == "" {
				msg = grammarError(tc.what, tc.value).Error()
			}
			for path, err := range map[string]error{"command": cmdErr, "study": studyErr} {
				if !strings.Contains(err.Error(), msg) {
					t.Errorf("%s error %q: want the grammar's message %q", path, err, msg)
				}
			}
		})
	}
}

// grammarError is the error of the one function that reads the value.
func grammarError(what, value string) error {
	var err error
	switch what {
	case "slo":
		_, err = capacity.Parse(value)
	case "concurrency":
		_, err = load.ParseLevels(value)
	case "duration", "timeout", "confirm":
		_, err = load.ParseSeconds(value)
	case "noise":
		_, err = load.ParsePercent(value)
	case "memory":
		_, err = load.ParseSize(value)
	}
	if err == nil {
		return errors.New("(no grammar error)")
	}
	return err
}

// commandPath gives the value to the flag that takes it, as the command
// does: the flag's Value or reader, then the command's plan.
func commandPath(what, value string) error {
	opts := plan.Defaults(target)
	opts.Requests, opts.RequestsSet = 1_000_000, true
	seconds := func() (time.Duration, error) {
		var d time.Duration
		return d, load.NewSeconds(&d, 0).Set(value)
	}
	switch what {
	case "slo": // bench's --slo, and capacity's
		opts.SLO = []string{value}
		_, errBench := opts.Build()
		_, errCap := capacityOptions(opts, func(o *plan.CapacityOptions) {}).Build()
		if (errBench == nil) != (errCap == nil) {
			return fmt.Errorf("bench says %v, capacity %v", errBench, errCap)
		}
		return errCap
	case "concurrency": // sweep's -c
		_, err := (&plan.SweepOptions{Load: opts, Args: []string{target}, Levels: value}).Build()
		return err
	case "duration": // sweep's -t
		d, err := seconds()
		if err != nil {
			return err
		}
		opts.Duration, opts.TimeLimitSet = d, true
		_, err = (&plan.SweepOptions{Load: opts, Args: []string{target}, Levels: "1,2"}).Build()
		return err
	case "timeout": // -s
		d, err := seconds()
		if err != nil {
			return err
		}
		opts.Timeout = d
		_, err = opts.Build()
		return err
	case "confirm": // capacity's --confirm
		d, err := seconds()
		if err != nil {
			return err
		}
		_, err = capacityOptions(opts, func(o *plan.CapacityOptions) { o.Confirm, o.ConfirmSet = d, true }).Build()
		return err
	case "noise": // --noise of sweep, compare and study
		_, err := load.ParsePercent(value)
		return err
	case "memory": // study's --memory
		m := studyfile.Measure{Kind: studyfile.MeasureCapacity, Levels: []int{8}, Duration: time.Second, Repeat: 1}
		return m.Override(studyfile.Overrides{Memory: &value})
	}
	panic("no command path for " + what)
}

// capacityOptions are capacity's options with -t 1 and --slo p99<=1s
// unless load has objectives, changed by set.
func capacityOptions(load plan.Options, set func(*plan.CapacityOptions)) *plan.CapacityOptions {
	load.RequestsSet = false
	load.Duration, load.TimeLimitSet = time.Second, true
	if len(load.SLO) == 0 {
		load.SLO = []string{"p99<=1s"}
	}
	o := &plan.CapacityOptions{Load: load, Model: capacity.ModelOpen, Resolution: 0.02, ResolutionText: "2%"}
	set(o)
	return o
}

// studyFile returns a study whose last line gives the value to the key
// that takes it, and the value's line and column.
func studyFile(what, value string) (line, col int, file string) {
	q := strconv.Quote(value)
	measure := []string{"kind: sweep", "concurrency: 1,2", "requests: 1000"}
	last := what + ": " + q
	switch what {
	case "slo":
		measure = []string{"kind: capacity", "duration: 1s"}
		last = "slo: [" + q + "]"
	case "concurrency":
		measure = []string{"kind: sweep", "requests: 1000000"}
	case "confirm", "memory":
		measure = []string{"kind: capacity", "duration: 1s", `slo: ["p99<=1s"]`}
	}
	head := `question: Does the grammar hold?
factors:
  workers: [1, 2]
backends:
  - name: pool
    command: [backbench, serve, --processes, "{workers}", --listen, "{listen}"]
    url: "http://{target}/"
measure:
`
	var b strings.Builder
	b.WriteString(head)
	for _, m := range measure {
		b.WriteString("  " + m + "\n")
	}
	line = strings.Count(b.String(), "\n") + 1
	col = 3 + strings.Index(last, q)
	b.WriteString("  " + last + "\n")
	return line, col, b.String()
}
