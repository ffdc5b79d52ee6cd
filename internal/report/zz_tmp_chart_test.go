package report
import ("os";"testing")
func TestWriteChartTmp(t *testing.T){ sw:=fixedSweep(); f,_:=os.Create("/tmp/sweep_fixed.png"); defer f.Close(); if err:=SweepChart(f,&sw,"png");err!=nil{t.Fatal(err)} }
