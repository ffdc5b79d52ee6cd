package execute_test

import (
	"context"
	"testing"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/realbackend"
)

// TestFPMStatus reads php-fpm's status page before and after a run
// (bench --fpm-status) and samples its processes (--backend-pid).
func TestFPMStatus(t *testing.T) {
	fpm := realbackend.PHPFPM(t, "unix")
	po := benchLoad{n: 40, c: 2, timeout: 30, keepAlive: true}.options(fpm.URL(realbackend.HelloScript))
	po.DocumentRoot, po.FPMStatus, po.BackendPIDs = fpm.DocRoot, realbackend.StatusPath, []int{fpm.PID}
	s := runBenchPlan(t, context.Background(), po, execute.Options{Quiet: true, Observe: true}).Summary
	if s.Failed != 0 || s.Backend == nil {
		t.Fatalf("failed %d backend %+v", s.Failed, s.Backend)
	}
	b := s.Backend
	if b.FPMStatusStart["pool"] != "backbench" || b.FPMStatusEnd["listen queue"] == "" {
		t.Errorf("status %v / %v", b.FPMStatusStart, b.FPMStatusEnd)
	}
	if b.ProcessesMax != 5 { // the master and pm.max_children = 4
		t.Errorf("php-fpm processes %d, want 5", b.ProcessesMax)
	}
}
