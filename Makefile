# backbench: build, test, demo. Every target works on a fresh machine with Go;
# the real-backend tests need php-fpm (installed by .ci/run).
GO      ?= go
BIN     := bin/backbench
PKGS    := ./...

.PHONY: build test lint demo bench-go clean

build:
	$(GO) build -o $(BIN) ./cmd/backbench

# The test command (README, .ci/run): lint, then every test with the race
# detector.
test: lint
	$(GO) test -race -count=1 -timeout 15m $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@bash scripts/depcheck.sh

# The demo: built-in FastCGI and HTTP backends on TCP and Unix sockets, bench
# against each with and without keep-alive.
demo: build
	@bash scripts/demo.sh

# Request-path benchmarks of both protocols (ns/op, allocs/op).
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./fcgi ./httpprobe ./internal/stats

clean:
	rm -rf bin
