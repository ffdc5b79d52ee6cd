package sweep_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"testing"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/realbackend"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/sweep"
)

// TestFPMStatusPerLevel: a sweep (sweep -k -n 20 -c 1,2 --warmup 0
// --fpm-status) puts php-fpm's status read at the end of each level in
// its CSV.
func TestFPMStatusPerLevel(t *testing.T) {
	fpm := realbackend.PHPFPM(t, "unix")
	po := plan.Defaults("")
	po.Requests, po.RequestsSet, po.KeepAlive = 20, true, true
	po.DocumentRoot, po.FPMStatus = fpm.DocRoot, realbackend.StatusPath
	so := plan.SweepOptions{Load: po, Args: []string{fpm.URL(realbackend.HelloScript)}, Levels: "1,2", WarmupSet: true}
	sp, err := so.Build()
	if err != nil {
		t.Fatal(err)
	}
	sp.Config.Options = execute.Options{Quiet: true, Version: "test"}
	res, err := sweep.Run(context.Background(), sp.Config, sp.Series)
	if err != nil {
		t.Fatal(err)
	}
	sw := sp.Config.Document(sp.Series, sp.Backends, res)
	var b bytes.Buffer
	if err := report.SweepCSV(&b, &sw); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 3 || rows[0][16] != "fpm_listen_queue" {
		t.Fatalf("sweep.csv %v (%v)", rows, err)
	}
	for _, row := range rows[1:] {
		if active, err := strconv.Atoi(row[17]); err != nil || active < 1 || row[16] == "" || row[18] == "" {
			t.Errorf("level %s: php-fpm columns %q", row[1], row[16:])
		}
	}
}
