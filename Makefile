# backbench: build, test, demo. Every target works on a fresh machine with Go;
# the real-backend tests need php-fpm (installed by .ci/run).
GO      ?= go
BIN     := bin/backbench
PKGS    := ./...

.PHONY: build test test-long lint demo bench bench-go fuzz clean integration

# The version and commit are stamped with -ldflags, whatever GOFLAGS says
# (-buildvcs=false leaves them out of the build info); outside a Git
# checkout they stay empty and backbench version reads the build info.
GIT_COMMIT   := $(shell git rev-parse HEAD 2>/dev/null)
GIT_VERSION  := $(shell git describe --tags --dirty 2>/dev/null)
GIT_TIME     := $(shell git log -1 --format=%cI 2>/dev/null)
GIT_MODIFIED := $(shell test -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo true)
LDFLAGS      := -X main.stampCommit=$(GIT_COMMIT) -X main.stampVersion=$(GIT_VERSION) \
                -X main.stampTime=$(GIT_TIME) -X main.stampModified=$(GIT_MODIFIED)

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/backbench

# The test command (README, .ci/run): lint, then every test with the race
# detector, then the open model's pacing accuracy and the 20000-connection
# run of each engine on a plain build (the race detector slows the
# client's own code too much for either; the pacing test runs only there,
# with BACKBENCH_PACING=1, since tests beside it take the CPUs from it)
# (deploy/kubernetes is a module of its own: the Kubernetes API
# types its manifest test needs stay out of backbench's dependencies).
# The load-path tests run twice: with the default engine (auto: io_uring
# for runs without keep-alive where the kernel allows it) and again with
# BACKBENCH_ENGINE=poller, so that every engine that ships passes them.
# A real-backend test that skips (backend not installed, outside CI) notes
# itself in $BACKBENCH_SKIPLOG (internal/realbackend.Skip); the last lines
# list them, with why. About 20 minutes on a 2-core machine.
test: export BACKBENCH_SKIPLOG := $(CURDIR)/bin/skipped-tests.txt
test: lint
	@mkdir -p bin && : >"$$BACKBENCH_SKIPLOG"
	$(GO) test -race -count=1 -timeout 25m $(PKGS)
	BACKBENCH_ENGINE=poller $(GO) test -race -count=1 -timeout 25m ./cmd/backbench ./internal/...
	BACKBENCH_PACING=1 $(GO) test -count=1 -run '^(TestOpenModelPacingError|TestHighConcurrency)$$' -v ./internal/execute
	cd deploy/kubernetes && $(GO) test -race -count=1 ./...
	@bash scripts/skipped-tests.sh "$$BACKBENCH_SKIPLOG"

# The long truth tests, apart from make test (10 to 40 minutes): the
# capacity of a prefork:4 backend of 20 ms found at -t 2 and at -t 10
# and held by a 30 s bench (docs/capacity.md); the sizing of a CPU-bound
# and of a sleeping prefork pool at 1, 2 and 4 workers (docs/study.md), a
# CPU-bound pool's capacity against a saturating run, php-fpm's knee; a
# study run until decided on four delays, and on six identical backends;
# a sizing held back by -c 4; keep-alive's p99 cost on a pool of 2.
test-long:
	BACKBENCH_LONG=1 $(GO) test -count=1 -timeout 40m -run '^(TestCapacityHoldsPrefork4|TestSizingCPUBound|TestSizingSleep|TestSizingMemoryAndCompare|TestSizingCoresLimit|TestSizingPHPFPM|TestStudyUntilDecided|TestStudyUntilIdentical|TestSizingClientCeiling|TestStudyKeepAliveCost|TestSizingStarman)$$' -v ./cmd/backbench

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	cd deploy/kubernetes && $(GO) vet ./...
	@bash scripts/depcheck.sh

# The demo: built-in FastCGI and HTTP backends on TCP and Unix sockets, bench
# against each with and without keep-alive (one line each; the reports in
# demo-out/bench-*.txt); then a concurrency sweep over serial, prefork:4,
# threaded and evented backends that leaves its chart and page in demo-out/;
# then the 2008 study, short, whose backends the study starts and stops
# itself (its answers; study.json and study.html in demo-out/study/); then
# a six-line summary ending with the page's path. Under a minute.
demo: build
	@BB=$(BIN) bash scripts/demo.sh
	@BB=$(BIN) bash scripts/sweepdemo.sh
	@BB=$(BIN) bash scripts/studydemo.sh
	@bash scripts/demo-summary.sh

# Every real-backend test over scripts/backends.sh (realbackends*_test.go
# in internal/execute and internal/proberun, realsweep_test.go in
# internal/sweep): php-fpm, fcgiwrap, Thin and Ruby's FastCGI servers,
# which `make test` runs too, and Perl FCGI, Puma, Unicorn, Starman,
# gunicorn and nginx in front of php-fpm, each skipped when not installed
# (`bash scripts/backends.sh install` installs them all). About a minute.
integration:
	$(GO) test -race -count=1 -timeout 15m -tags integration -run '^TestReal' -v ./internal/execute ./internal/proberun ./internal/sweep

# Request-path benchmarks of both protocols (ns/op, allocs/op).
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./fcgi ./httpprobe ./internal/recorder ./internal/stats

# Every native fuzzer of the module, FUZZTIME each (scripts/fuzz.sh finds
# them with go test -list, so that new fuzzers run without editing this
# file). Crashers land in the package's testdata/fuzz and fail the target.
FUZZTIME ?= 20s
fuzz:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

clean:
	rm -rf bin

# backbench side by side with wrk, ab, a gofast loop, the bare loop and nginx
# (those that are installed), 5 rounds alternating the order, printing each
# run, the medians of requests/sec and client CPU per request, the median
# ratios against the performance targets, and a summary table. About eight minutes.
# With BASELINE=BIN (an older backbench binary) it runs instead this tree's
# backbench against BIN, same arguments, on the built-in backends only (HTTP
# with and without keep-alive, FastCGI with and without KEEP_CONN, each over
# TCP and a Unix socket; then this tree against itself, the noise), ratios
# new / old, about six minutes. BIN must be given; to build one from an
# older commit (62dc21f here; make build stamps its commit, which the run
# prints):
#   git worktree add --detach /tmp/old 62dc21f
#   make -C /tmp/old build BIN=/tmp/backbench-old
#   git worktree remove /tmp/old
#   make bench BASELINE=/tmp/backbench-old
BASELINE ?=
bench:
	$(GO) run ./bench/harness $(if $(BASELINE),-baseline $(BASELINE))
