package page

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestTargets: a bench result with targets (an access log replayed) has
// one table of per-target figures, a note of the log's lines left out,
// and a chart of p99 with a point per target.
func TestTargets(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "bench-targets.json"))
	if err != nil {
		t.Fatal(err)
	}
	page := renderData(t, "bench-targets.json", data)
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var table *html.Node
	for _, tb := range find(doc, "table") {
		if strings.HasPrefix(text(find(tb, "caption")[0]), "Targets (3;") {
			if table != nil {
				t.Fatal("two targets tables")
			}
			table = tb
		}
	}
	if table == nil {
		t.Fatalf("no targets table in\n%s", outline(t, []byte(page)))
	}
	var rows []string
	for _, tr := range find(find(table, "tbody")[0], "tr") {
		var cells []string
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode {
				cells = append(cells, text(c))
			}
		}
		rows = append(rows, strings.Join(cells, " "))
	}
	if len(rows) != 3 || !strings.HasPrefix(rows[0], "GET / 2 100 0 ") || !strings.HasPrefix(rows[1], "GET /cart 1 50 0 ") || !strings.HasPrefix(rows[2], "HEAD /health 1 50 0 ") {
		t.Errorf("rows %q", rows)
	}
	if !strings.Contains(page, "Replayed 4 of 6 lines of access.log in its order (methods GET,HEAD): 1 skipped, 1 malformed.") ||
		!strings.Contains(page, "First line left out: access.log:4: method POST not replayed") {
		t.Errorf("no note of the log's lines")
	}
	var chart *html.Node
	for _, fig := range find(doc, "figure") {
		if text(find(find(fig, "svg")[0], "title")[0]) == "p99 of the request time per target" {
			chart = fig
		}
	}
	if chart == nil {
		t.Fatalf("no p99 chart in\n%s", outline(t, []byte(page)))
	}
	var tips []string
	for _, g := range find(chart, "g") {
		if attr(g, "class") != "series" {
			continue
		}
		for _, ti := range find(g, "title") {
			tips = append(tips, text(ti))
		}
	}
	joined := strings.Join(tips, "\n")
	for _, want := range []string{"GET /: p99 4.287 ms", "GET /cart: p99 1.575 ms", "HEAD /health: p99 2.980 ms"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no point %q among %q", want, tips)
		}
	}
	if svg := find(chart, "svg")[0]; !bytes.Contains([]byte(text(svg)), []byte("/cart")) {
		t.Errorf("the targets are not named on the axis")
	}
}
