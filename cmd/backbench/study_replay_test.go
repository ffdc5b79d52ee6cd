package main

import (
	"os"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/realbackend"
)

// TestStudyReplayPHPFPM runs docs/recipes.md's seventh recipe: the study
// file and the access log the page shows are studies/replay-php-fpm.yaml
// and .log, byte for byte, and the study, run as the page says against
// php-fpm (its keys read by the study's parser, which refuses an unknown
// one), starts both pools (the verification's page answering "index")
// and replays the log at each level, every request complete; study.json
// and the text give each level's figures per target.
func TestStudyReplayPHPFPM(t *testing.T) {
	onceAcrossEngines(t)
	page := readDocFile(t, "../../docs/recipes.md")
	i := strings.Index(page, "## 7. Replay an nginx log")
	if i < 0 {
		t.Fatal("docs/recipes.md has no recipe 7")
	}
	recipe := page[i:]
	if j := strings.Index(recipe[1:], "\n## "); j > 0 {
		recipe = recipe[:j+1]
	}
	for _, f := range []string{"replay-php-fpm.yaml", "replay-php-fpm.log"} {
		b, err := os.ReadFile("../../studies/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(recipe, "```text\n"+string(b)+"```\n") {
			t.Errorf("recipe 7 does not show studies/%s as it is", f)
		}
	}
	if !strings.Contains(recipe, "backbench study -q --out recipes-out/replay studies/replay-php-fpm.yaml") {
		t.Error("recipe 7 does not run studies/replay-php-fpm.yaml")
	}
	if _, err := realbackend.Binary(); err != nil {
		realbackend.Missing(t, err.Error())
	}
	r := runStudy(t, "../../studies/replay-php-fpm.yaml")
	if r.code != 0 || r.res == nil {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if len(r.res.Configurations) != 2 {
		t.Errorf("configurations %+v, want workers=2 and workers=4", r.res.Configurations)
	}
	for _, c := range r.res.Configurations {
		if c.Failure != "" || c.Starts != 1 {
			t.Errorf("%s: %s (%d starts)", c.Name, c.Failure, c.Starts)
		}
	}
	for _, s := range r.res.Series {
		if len(s.Steps) != 2 {
			t.Errorf("%s: %d levels, want c=1 and c=4", s.Label, len(s.Steps))
		}
		for _, st := range s.Steps {
			if st.Failed != 0 || st.Complete != 200 {
				t.Errorf("%s at c=%d: %d complete, %d failed, want 200 and 0", s.Label, st.Concurrency, st.Complete, st.Failed)
			}
			// Per target at each level: the log's paths, their requests
			// summing to the step's, each with its medians.
			var sum int64
			for _, tg := range st.Targets {
				sum += tg.Requests
				if tg.Requests > 0 && (tg.P50Ms.Median <= 0 || tg.P99Ms.Median < tg.P50Ms.Median) {
					t.Errorf("%s at c=%d, %s: p50 %v, p99 %v", s.Label, st.Concurrency, tg.Target, tg.P50Ms, tg.P99Ms)
				}
			}
			if len(st.Targets) < 2 || sum != st.Complete {
				t.Errorf("%s at c=%d: targets %+v, want the log's paths summing to %d requests", s.Label, st.Concurrency, st.Targets, st.Complete)
			}
		}
	}
	if !strings.Contains(r.stdout, "Per target (medians of the trials, in ms") || !strings.Contains(r.stdout, "GET /search.php") {
		t.Errorf("the study's text has no per-target table:\n%s", r.stdout)
	}
}
