package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/trials"
)

// TestBenchUntilDecided: bench --repeat 4 --until decided --against a
// saved run of a 10 ms backend, run against a 12 ms one, adds trials
// until its comparisons (req/s and p50, --fail-on's metrics) are decided:
// "slower" and "higher", before --max-repeat, the gate tripped on them
// (exit status 4), and the report says after how many rounds. Against
// the 10 ms backend itself, with --budget and --format json, the JSON
// keeps until, max_repeat, budget_seconds and stopping, and the trials
// run are the rounds it says. A busy machine can spread the trials past
// what 12 rounds decide (a slow request in one saved trial is enough:
// the saved side does not grow): the baseline is then saved and the run
// made once more (a broken rule fails both times). Few requests a trial,
// two at a time, keep it short.
func TestBenchUntilDecided(t *testing.T) {
	onceAcrossEngines(t)
	bin := studyBinary(t)
	dir := t.TempDir()
	fast := strings.TrimPrefix(startDelayServe(t, bin, dir, "a", "10ms"), "a=")
	slow := strings.TrimPrefix(startDelayServe(t, bin, dir, "slow", "12ms"), "slow=")
	saved := filepath.Join(dir, "saved.json")
	q := trials.Sequential{MinRounds: 4, MaxRounds: 12}
	var text string
	decided := false
	for try := 1; try <= 2 && !decided; try++ {
		if b, err := exec.Command(bin, "bench", "-q", "--format", "json", "-o", saved, "-c", "2", "-n", "30", "--repeat", "6", fast).CombinedOutput(); err != nil {
			t.Fatalf("saving the baseline: %v\n%s", err, b)
		}
		cmd := exec.Command(bin, "bench", "-q", "-c", "2", "-n", "30", "--repeat", "4", "--until", "decided", "--max-repeat", "12",
			"--against", saved, "--fail-on", "req/s slower, p50 higher", slow)
		b, _ := cmd.CombinedOutput()
		text = string(b)
		code := cmd.ProcessState.ExitCode()
		rows := map[string]string{}
		for _, l := range strings.Split(text, "\n") {
			if f := strings.Fields(l); len(f) > 2 && (f[0] == "req/s" || f[0] == "p50") {
				rows[f[0]] = l
			}
		}
		decided = code == 4 && strings.Contains(rows["req/s"], " slower") && strings.Contains(rows["p50"], " higher") &&
			strings.Contains(text, "every comparison with the saved run decided after ")
		if !decided {
			t.Logf("try %d: exit %d, req/s %q, p50 %q", try, code, rows["req/s"], rows["p50"])
		}
	}
	if !decided {
		t.Fatalf("12 ms against a saved 10 ms: want slower and higher, decided, the gate tripped (exit 4):\n%s", text)
	}
	flat := strings.Join(strings.Fields(text), " ")
	var k int
	if i := strings.Index(flat, "decided after "); i < 0 || func() bool { _, err := fmt.Sscanf(flat[i:], "decided after %d trials", &k); return err != nil }() || k < 4 || k >= 12 {
		t.Errorf("decided after %d trials: want from 4 to before --max-repeat 12\n%s", k, text)
	}
	for _, want := range []string{
		"Trials: trials until the comparisons with the saved run (by req/s and p50) are decided (the first 4, at most 12)",
		fmt.Sprintf("Median of %d trials", k),
		"2 of 2 comparisons with the saved run (by req/s and p50) decided",
		"ratio [" + trials.ConfidenceText(q.LookConfidence()) + " interval]",
		"tripped: req/s slower",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the report does not say %q:\n%s", want, text)
		}
	}

	// Against the baseline's own backend: JSON, within a budget.
	out := filepath.Join(dir, "same.json")
	if b, err := exec.Command(bin, "bench", "-q", "--format", "json", "-o", out, "-c", "2", "-n", "30", "--until", "decided",
		"--max-repeat", "5", "--budget", "5m", "--against", saved, fast).CombinedOutput(); err != nil {
		t.Fatalf("10 ms against its saved run: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Until     string            `json:"until"`
		MaxRepeat int               `json:"max_repeat"`
		Budget    float64           `json:"budget_seconds"`
		Stopping  *trials.Stopping  `json:"stopping"`
		Trials    []json.RawMessage `json:"trials"`
		Notes     []string          `json:"notes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	u := doc.Stopping
	if doc.Until != "decided" || doc.MaxRepeat != 5 || doc.Budget != 300 || u == nil || u.Pairs != 1 ||
		(u.Stopped != trials.StoppedDecided && u.Stopped != trials.StoppedMaxRepeat) || u.Rounds != len(doc.Trials) || u.Rounds < 4 || u.Rounds > 5 {
		t.Errorf("until %q, max_repeat %d, budget_seconds %v, stopping %+v, %d trials", doc.Until, doc.MaxRepeat, doc.Budget, u, len(doc.Trials))
	}
	if !strings.Contains(strings.Join(doc.Notes, "\n"), "trials until decided: ") {
		t.Errorf("notes %q: none says how the trials ended", doc.Notes)
	}
}

// TestBenchUntilErrors: bench's --until decided and its flags, given where
// they cannot apply, are usage errors (exit 2) said before any
// connection: without --against, --budget or --max-repeat without
// --until, and a saved run of one run (no trials) that the rule can
// never decide against.
func TestBenchUntilErrors(t *testing.T) {
	onceAcrossEngines(t)
	bin := studyBinary(t)
	dir := t.TempDir()
	url := "http://unix:" + filepath.Join(dir, "none.sock") + ":/"
	one, err := filepath.Abs("../../internal/document/testdata/schema1/bench.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--until", "decided"}, "--until decided decides the comparison with a saved run: give the run with --against FILE (or stop on the interval's width with --precision P)"},
		{[]string{"--repeat", "5", "--until", "decided"}, "give the run with --against FILE"},
		{[]string{"--budget", "1m"}, "--budget needs --until decided"},
		{[]string{"--repeat", "5", "--budget", "1m"}, "--budget needs --until decided"},
		{[]string{"--max-repeat", "9"}, "--max-repeat needs --precision P or --until decided"},
		{[]string{"--until", "decided", "--repeat", "2", "--against", one}, "want at least 4 first rounds"},
		{[]string{"--until", "decided", "--against", one}, "too few for the sequential rule to decide against within --max-repeat 20"},
	} {
		cmd := exec.Command(bin, append([]string{"bench", "-q", "-n", "5"}, append(c.args, url)...)...)
		b, err := cmd.CombinedOutput()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(b), c.want) || strings.Count(strings.TrimSpace(string(b)), "\n") != 0 {
			t.Errorf("bench %v: %v, %s: want exit 2 and one line with %q", c.args, err, b, c.want)
		}
	}
}
