package main

import (
	"os"
	"strings"
	"testing"
)

// TestStudyReplayRecipe: docs/recipes.md's seventh recipe shows the study
// file and the access log studies/replay-php-fpm.yaml and .log, byte for
// byte, and runs the study as backbench study does. The run itself, against
// php-fpm, is internal/studyrun's TestStudyReplayPHPFPM.
func TestStudyReplayRecipe(t *testing.T) {
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
}
