package studyfile

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
)

// TestDocExamples parses every study file of docs/study.md, each ```yaml
// block with a top-level question: key (other blocks are fragments), and
// checks that the page's first example is testdata/good/example.yaml.
func TestDocExamples(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "study.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?ms)^```yaml\n(.*?)^```").FindAllStringSubmatch(string(page), -1)
	question := regexp.MustCompile(`(?m)^question:`)
	var studies []*Study
	for i, b := range blocks {
		if !question.MatchString(b[1]) {
			continue
		}
		s, err := Parse(fmt.Sprintf("docs/study.md, yaml block %d", i+1), []byte(b[1]))
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		studies = append(studies, s)
	}
	if len(studies) == 0 {
		t.Fatal("docs/study.md: no study file in a yaml block")
	}
	want := loadGood(t, "example.yaml")
	if got := studies[0]; !reflect.DeepEqual(unplaced(got), unplaced(want)) {
		t.Errorf("the first example of docs/study.md differs from testdata/good/example.yaml:\n%+v\n%+v", unplaced(got), unplaced(want))
	}
}

// unplaced is a copy of a study without its path and positions.
func unplaced(s *Study) Study {
	c := *s
	c.File = ""
	c.Factors = append([]Factor(nil), s.Factors...)
	for i := range c.Factors {
		c.Factors[i].Line, c.Factors[i].Col = 0, 0
	}
	c.Backends = append([]Backend(nil), s.Backends...)
	for i := range c.Backends {
		c.Backends[i].Line, c.Backends[i].Col = 0, 0
	}
	return c
}
