module github.com/backbench/backbench

go 1.26.0

require golang.org/x/sys v0.50.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	github.com/yookoala/gofast v0.8.0 // indirect
	golang.org/x/tools v0.0.0-20200908211811-12e1bf57a112 // indirect
)
