package studyrun_test

import (
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/realbackend"
	"github.com/backbench/backbench/internal/trials"
)

// The seeds (studies/*.yaml) run on built-in backends with short
// settings (backbench study's -c, -n, --repeat, --warmup as overrides).

// TestStudy2008 runs the 2008 seed on built-in backends with short
// settings: transport verdicts at each keep-alive mode, keep-alive
// verdicts on each transport, and no pair across two factors.
func TestStudy2008(t *testing.T) {
	check2008Seed(t, serveStudy(t, "../../studies/2008-sweep.yaml", serveOverrides("1,4", 100, 4, 10)))
}

// TestStudy2008PHPFPM runs the 2008 seed on php-fpm (a master per
// transport, its pool file written by the study): the same design.
func TestStudy2008PHPFPM(t *testing.T) {
	if _, err := realbackend.Binary(); err != nil {
		realbackend.Missing(t, err.Error())
	}
	check2008Seed(t, serveStudy(t, "../../studies/2008-sweep-php-fpm.yaml", serveOverrides("1,4", 200, 4, 10)))
}

// check2008Seed checks a run of a 2008 study: transport verdicts at each
// keep-alive mode, keep-alive verdicts on each transport, no pair across
// two factors, and the answers last in the text.
func check2008Seed(t *testing.T, r serveStudyRun) {
	t.Helper()
	r.ok(t)
	byFactor := serveOneFactor(t, r.res)
	want := map[string][]string{
		"transport": {"keepalive=off c=1", "keepalive=off c=4", "keepalive=on c=1", "keepalive=on c=4"},
		"keepalive": {"transport=tcp c=1", "transport=tcp c=4", "transport=unix c=1", "transport=unix c=4"},
	}
	for f, keys := range want {
		if len(byFactor[f]) != len(keys) {
			t.Errorf("%s: %d comparisons of req/s, want %d: %v", f, len(byFactor[f]), len(keys), byFactor[f])
		}
		for _, k := range keys {
			c, ok := byFactor[f][k]
			if !ok {
				t.Errorf("%s: no comparison at %s", f, k)
				continue
			}
			if c.Verdict == trials.NoVerdict {
				t.Errorf("%s at %s: no verdict with 4 trials a side", f, k)
			}
		}
	}
	if len(r.res.Answers) != 2 || !strings.HasPrefix(r.res.Answers[0].Conclusion, "transport unix against tcp") {
		t.Errorf("answers: %+v", r.res.Answers)
	}
	if !strings.Contains(r.text, "Answers (") || !strings.Contains(r.words, serveWords(r.res.Answers[1].Conclusion)) {
		t.Errorf("the text output does not end with the answers:\n%s", r.text)
	}
}

// TestStudyMoscowPM runs the Moscow.pm seed: FastCGI prefork against an
// HTTP prefork server, with verdicts on req/s, mean, max and PSS, and the
// protocol named as part of the deployment.
func TestStudyMoscowPM(t *testing.T) {
	r := serveStudy(t, "../../studies/2008-moscow-pm.yaml", serveOverrides("", 200, 4, -1))
	r.ok(t)
	serveOneFactor(t, r.res)
	metrics := map[string]string{}
	for _, c := range r.res.Comparisons {
		metrics[c.Metric] = c.Verdict
	}
	for _, m := range []string{trials.MetricRequestsPerSecond, trials.MetricMeanMs, trials.MetricMaxMs, trials.MetricBackendPSSBytes} {
		v, ok := metrics[m]
		if !ok || v == trials.NoVerdict {
			t.Errorf("metric %s: verdict %q (present %v)", m, v, ok)
		}
	}
	if c := r.res.Answers[0].Conclusion; !strings.Contains(c, "over HTTP rather than FastCGI") {
		t.Errorf("the conclusion does not name the protocol: %s", c)
	}
	for _, c := range r.res.Configurations {
		if c.MeanPSSBytes <= 0 || c.MaxProcs < 5 {
			t.Errorf("%s: PSS %v, %d processes (a master and 4 children)", c.Name, c.MeanPSSBytes, c.MaxProcs)
		}
	}
}

// TestStudyWorkers runs a pool of 2 against a pool of 4, the 4 marked
// exclusive: it is started in every round, and the notes say so.
func TestStudyWorkers(t *testing.T) {
	r := serveStudy(t, "../../studies/workers.yaml", serveOverrides("", 200, 4, -1))
	r.ok(t)
	serveOneFactor(t, r.res)
	for _, c := range r.res.Configurations {
		want := 1
		if c.Levels["workers"] == "4" {
			want = 4
			if !c.Exclusive {
				t.Errorf("%s is not exclusive", c.Name)
			}
		}
		if c.Starts != want {
			t.Errorf("%s started %d times, want %d", c.Name, c.Starts, want)
		}
	}
	if !strings.Contains(strings.Join(r.res.Notes, "\n"), "ran alone (exclusive)") {
		t.Errorf("notes do not say the pool of 4 ran alone: %v", r.res.Notes)
	}
	if len(r.res.Comparisons) == 0 || r.res.Comparisons[0].Verdict == trials.NoVerdict {
		t.Errorf("no verdict on workers: %+v", r.res.Comparisons)
	}
}

// TestStudySeedsRun runs the other seeds, short: each ends without a
// failed configuration, and every configuration started and answered.
func TestStudySeedsRun(t *testing.T) {
	for _, tc := range []struct {
		file, c string
		n       int64
	}{
		{"2006-rails.yaml", "20", 300},
		{"2013-prefork.yaml", "10", 200},
		{"2024-tls.yaml", "20", 300},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := serveStudy(t, "../../studies/"+tc.file, serveOverrides(tc.c, tc.n, 2, -1))
			r.ok(t)
			serveOneFactor(t, r.res)
			for _, c := range r.res.Configurations {
				if c.Failure != "" || c.Starts != 1 {
					t.Errorf("%s: %s (%d starts)", c.Name, c.Failure, c.Starts)
				}
			}
			for _, s := range r.res.Series {
				if len(s.Steps) != 1 || s.Steps[0].Failed != 0 || s.Steps[0].Complete == 0 {
					t.Errorf("%s: %+v", s.Label, s.Steps)
				}
			}
		})
	}
}
