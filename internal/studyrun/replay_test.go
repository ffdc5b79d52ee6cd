package studyrun_test

import (
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/realbackend"
	"github.com/backbench/backbench/internal/studyfile"
)

// TestStudyReplayPHPFPM runs studies/replay-php-fpm.yaml (docs/recipes.md's
// seventh recipe, which cmd/backbench's TestStudyReplayRecipe holds to the
// file) against php-fpm: it starts both pools (the verification's page
// answering "index") and replays the log at each level, every request
// complete; the result and the text give each level's figures per target.
func TestStudyReplayPHPFPM(t *testing.T) {
	if _, err := realbackend.Binary(); err != nil {
		realbackend.Missing(t, err.Error())
	}
	r := serveStudy(t, "../../studies/replay-php-fpm.yaml", studyfile.Overrides{})
	r.ok(t)
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
	if !strings.Contains(r.text, "Per target (medians of the trials, in ms") || !strings.Contains(r.text, "GET /search.php") {
		t.Errorf("the study's text has no per-target table:\n%s", r.text)
	}
}
