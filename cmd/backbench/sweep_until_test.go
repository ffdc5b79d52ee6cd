package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/trials"
)

// startDelayServe starts the built-in HTTP backend of bin answering after
// delay on a Unix socket in dir, and returns its URL; the test's end
// stops it (by its PID).
func startDelayServe(t *testing.T, bin, dir, name, delay string) string {
	t.Helper()
	sock := filepath.Join(dir, name+".sock")
	cmd := exec.Command(bin, "serve", "--protocol", "http", "--delay", delay, "--listen", "unix:"+sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "listening ") {
		t.Fatalf("serve: %q, %v", line, err)
	}
	return name + "=http://unix:" + sock + ":/"
}

// untilSweep is what TestSweepUntilDecided reads of a sweep.json.
type untilSweep struct {
	Until       string              `json:"until"`
	Repeat      int                 `json:"repeat"`
	MaxRepeat   int                 `json:"max_repeat"`
	Budget      float64             `json:"budget_seconds"`
	Stopping    *trials.Stopping    `json:"stopping"`
	Comparisons []trials.Comparison `json:"comparisons"`
	Notes       []string            `json:"notes"`
	Series      []struct {
		Label  string `json:"label"`
		Levels []struct {
			Trials []json.RawMessage `json:"trials"`
		} `json:"levels"`
	} `json:"series"`
}

// TestSweepUntilDecided: a sweep of three backends, a at 10 ms (the
// baseline), slow at 12 ms and same at 10 ms, run with --until decided:
// slow against a is "slower", decided by the sequential rule before
// --max-repeat (its interval of the rule's confidence), and slow stops
// running once decided; same against a gets "same" or "undecided", never
// a direction, on any metric. sweep.json and the text say why the rounds
// ended and how many pairs were decided. A busy machine can spread the
// trials past what 30 rounds decide: the sweep is then run once more (a
// broken rule fails both times).
func TestSweepUntilDecided(t *testing.T) {
	onceAcrossEngines(t)
	bin := studyBinary(t)
	dir := t.TempDir()
	urls := []string{startDelayServe(t, bin, dir, "a", "10ms"), startDelayServe(t, bin, dir, "slow", "12ms"),
		startDelayServe(t, bin, dir, "same", "10ms")}
	var sw untilSweep
	var text string
	var slow trials.Comparison
	for try := 1; try <= 2; try++ {
		out := filepath.Join(dir, "out")
		args := append([]string{"sweep", "--until", "decided", "--budget", "20m", "--max-repeat", "30", "-c", "1", "-n", "30", "--out", out}, urls...)
		b, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("sweep: %v\n%s", err, b)
		}
		text = string(b)
		data, err := os.ReadFile(filepath.Join(out, "sweep.json"))
		if err != nil {
			t.Fatal(err)
		}
		sw = untilSweep{}
		if err := json.Unmarshal(data, &sw); err != nil {
			t.Fatal(err)
		}
		for _, c := range sw.Comparisons {
			if c.Series == "same" && trials.Directional(c.Verdict) {
				t.Fatalf("10 ms against 10 ms: %s %s %v (try %d)\n%s", c.Metric, c.Verdict, c.RatioCI95, try, text)
			}
			if c.Series == "slow" && c.Metric == trials.MetricRequestsPerSecond {
				slow = c
			}
		}
		if slow.Verdict == trials.Slower {
			break
		}
		t.Logf("try %d: 12 ms against 10 ms: %s %v (decided at round %d, withdrawn %v, p %.3g), stopping %+v",
			try, slow.Verdict, slow.RatioCI95, slow.DecidedAt, slow.Withdrawn, slow.PValue, sw.Stopping)
	}
	if slow.Verdict != trials.Slower || slow.DecidedAt < trials.DefaultMinRounds || slow.DecidedAt >= 30 {
		t.Fatalf("12 ms against 10 ms: %s, decided at round %d: want slower before round 30\n%s", slow.Verdict, slow.DecidedAt, text)
	}
	q := trials.Sequential{MinRounds: 4, MaxRounds: 30}
	if slow.Confidence != q.LookConfidence() {
		t.Errorf("interval of confidence %v: want the sequential rule's %v", slow.Confidence, q.LookConfidence())
	}
	if sw.Until != "decided" || sw.Repeat != 4 || sw.MaxRepeat != 30 || sw.Budget != 1200 {
		t.Errorf("sweep.json: until %q, repeat %d, max_repeat %d, budget %v", sw.Until, sw.Repeat, sw.MaxRepeat, sw.Budget)
	}
	u := sw.Stopping
	if u == nil || u.Pairs != 2 || u.Decided < 1 || u.Rounds > 30 ||
		(u.Stopped != trials.StoppedDecided && u.Stopped != trials.StoppedMaxRepeat) ||
		(u.Stopped == trials.StoppedDecided) != (u.Decided == 2) {
		t.Fatalf("stopping %+v: want 2 pairs, 1 or 2 decided, stopped decided when both are, else max_repeat", u)
	}
	trialsOf := map[string]int{}
	for _, s := range sw.Series {
		trialsOf[s.Label] = len(s.Levels[0].Trials)
	}
	if trialsOf["slow"] != slow.DecidedAt || trialsOf["a"] < trialsOf["slow"] || trialsOf["a"] != u.Rounds {
		t.Errorf("trials %v, slow decided at round %d, %d rounds: slow should stop once decided, a run every round", trialsOf, slow.DecidedAt, u.Rounds)
	}
	text = strings.Join(strings.Fields(text), " ")
	if !strings.Contains(text, "rounds until decided: ") || !strings.Contains(text, "pairs (a pair at a level, by its req/s) decided") ||
		!strings.Contains(text, "rounds until every pair is decided (the first 4 every series, at most 30 per level, within 20 min)") {
		t.Errorf("the text does not say how the rounds went:\n%s", text)
	}
}

// TestSweepUntilErrors: --until decided and its flags, given where they
// cannot apply, are usage errors (exit 2) said before any connection.
func TestSweepUntilErrors(t *testing.T) {
	onceAcrossEngines(t)
	bin := studyBinary(t)
	dir := t.TempDir()
	u1, u2 := "a=http://unix:"+filepath.Join(dir, "a.sock")+":/", "b=http://unix:"+filepath.Join(dir, "b.sock")+":/"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--budget", "1m", u1, u2}, "--budget needs --until decided"},
		{[]string{"--repeat", "5", "--budget", "1m", u1, u2}, "--budget needs --until decided"},
		{[]string{"--max-repeat", "9", u1, u2}, "--max-repeat needs --precision P or --until decided"},
		{[]string{"--until", "decided", u1}, "--until decided decides pairs of series"},
		{[]string{"--until", "decided", "--precision", "2%", u1, u2}, "two rules to stop the rounds"},
		{[]string{"--until", "decided", "--repeat", "2", u1, u2}, "want at least 4 first rounds"},
		{[]string{"--until", "sure", u1, u2}, `--until "sure": want decided`},
		{[]string{"--until", "decided", "--budget", "0", u1, u2}, "want more than 0"},
		{[]string{"--until", "decided", "--max-repeat", "101", u1, u2}, "--max-repeat 101"},
	} {
		cmd := exec.Command(bin, append([]string{"sweep", "-q", "-c", "1", "-n", "5", "--out", filepath.Join(dir, "out")}, c.args...)...)
		b, err := cmd.CombinedOutput()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(b), c.want) {
			t.Errorf("sweep %v: %v, %s: want exit 2 and %q", c.args, err, b, c.want)
		}
	}
	cmd := exec.Command(bin, "bench", "--until", "decided", "-n", "5", u1)
	if b, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("bench --until: exit %d, %s: want 2", cmd.ProcessState.ExitCode(), b)
	}
}
