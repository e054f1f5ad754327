# storeprint: make help lists the targets.
SHELL := /usr/bin/env bash
GO ?= go
BIN := bin
STATICCHECK_VERSION := v0.8.2
FUZZTIME ?= 10s
MODEL_CHECKS ?= 5000
MODEL_STEPS ?= 80

DIST ?= dist
# The gateway's manual shipped in its packages: every page of docs/ but the
# screenshots' gallery (packaging/gateway.yaml lists the same pages).
MANUAL := $(filter-out docs/screens.md,$(wildcard docs/*.md))

# The version the programs print and report: git describe, unless given
# (make package VERSION=1.4.0). Without either, a program falls back to the
# version Go recorded (see internal/version).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
# The packages' version: a tag's version (v1.4.0 -> 1.4.0; a build after it,
# 1.4.0-3-gabc1234, sorts after it as 1.4.0+3+gabc1234: "-" made "+");
# anything else, a commit without a tag above all (5298736, which would sort
# above every 1.x release), is 0.0.0+git<it>, below every release.
PKG_VERSION := $(shell echo '$(VERSION)' | sed -e 's/^v\([0-9]\)/\1/' -e '/^[0-9][0-9]*\.[0-9]/!s/^/0.0.0+git/' -e 's/^0\.0\.0+git$$/0.0.0+gitunknown/' -e 's/[^A-Za-z0-9.+~]/+/g')
LDFLAGS := $(if $(VERSION),-X github.com/storeprint/storeprint/internal/version.stamped=$(VERSION))

# The chain-scale benchmark's size: stores, and tasks a store (the full
# size fills about 8 GB and takes minutes; BENCH_TASKS=100 is a tenth).
BENCH_STORES ?= 10000
BENCH_TASKS ?= 1000
# The size make bench runs it at: a hundredth, to keep make bench short.
BENCH_SMALL_STORES ?= 1000
BENCH_SMALL_TASKS ?= 100
# The accept benchmarks: seconds each endpoint is measured, and rounds.
export STOREPRINT_BENCH_SECONDS ?= 5
export STOREPRINT_BENCH_ROUNDS ?= 2

.PHONY: help version build demo test test-short unit fuzz lint bench bench-scale windows package screenshots clean model rules

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

version: ## print the version the programs and the packages get
	@echo 'programs: $(VERSION)'; echo 'packages: $(PKG_VERSION)'

build: ## build the three binaries into bin/
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

package: ## the .deb packages (amd64, arm64) and the Windows zip, into dist/
	@set -e; build=$$(mktemp -d); trap 'rm -rf "$$build"' EXIT; mkdir -p $(DIST); \
	for arch in amd64 arm64; do \
	  echo "build linux/$$arch"; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o "$$build/linux_$$arch/" ./cmd/storeprint-gateway ./cmd/storeprint ./cmd/storeprint-cloud; \
	  for p in gateway cloud; do \
	    VERSION='$(PKG_VERSION)' ARCH=$$arch BUILD="$$build/linux_$$arch" $(GO) tool nfpm package --config packaging/$$p.yaml --packager deb --target $(DIST)/storeprint-$${p}_$(PKG_VERSION)_$$arch.deb >/dev/null; \
	  done; \
	done; \
	echo "build windows/amd64"; \
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o "$$build/windows_amd64/storeprint-gateway.exe" ./cmd/storeprint-gateway; \
	$(GO) run ./packaging/mkzip $(DIST)/storeprint-gateway_$(PKG_VERSION)_windows_amd64.zip "$$build/windows_amd64/storeprint-gateway.exe" packaging/windows/gateway.toml packaging/windows/README.txt $(MANUAL); \
	ls -l $(DIST)/*_$(PKG_VERSION)_*

demo: build ## run a gateway with two simulated printers and post sample orders (Ctrl-C stops)
	BIN=$(BIN) ./scripts/demo.sh

test: lint windows fuzz unit ## everything CI checks: lint, Windows build, tests, short fuzz runs

unit: ## the test suite (starts its own PostgreSQL; checks and unit-tests deploy/'s alert rules with promtool)
	$(GO) test -count=1 -timeout 20m ./...

test-short: ## the fast inner loop: go test -short, without the tests that need PostgreSQL, Chromium or Wine
	$(GO) test -short -count=1 ./...

rules: ## only the alert rules: promtool check rules and promtool test rules on deploy/prometheus (make unit runs them too)
	promtool check rules $$(ls deploy/prometheus/*.yml | grep -v '_test\.yml$$')
	promtool test rules deploy/prometheus/*_test.yml

model: ## the model-based test of the task lifecycle, many more cases than make test (MODEL_CHECKS, MODEL_STEPS)
	$(GO) test -count=1 -timeout 2h -run '^TestModel$$' ./gateway/ -rapid.checks=$(MODEL_CHECKS) -rapid.steps=$(MODEL_STEPS) -v

# A run that ends with "context deadline exceeded" and no failing input
# written is Go's fuzzing coordinator racing its own -fuzztime deadline
# (go.dev/issue/75804, fixed in Go 1.27), not a finding: it runs once more.
fuzz: ## short fuzz runs of every parser (FUZZTIME=10s each)
	@set -e; log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f"; \
	    for try in 1 2; do \
	      if $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg >$$log 2>&1; then break; fi; \
	      if [ $$try = 1 ] && grep -q 'context deadline exceeded' $$log && ! grep -q 'Failing input written' $$log; then \
	        echo "  the fuzzer stopped at its deadline with nothing found (go.dev/issue/75804): once more"; continue; \
	      fi; \
	      tail -40 $$log; exit 1; \
	    done; \
	  done; \
	done

lint: ## gofmt, go vet, staticcheck and a tidy go.mod
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod or go.sum is not tidy: run go mod tidy"; $(GO) mod tidy -diff; exit 1; }

windows: ## cross-compile and vet for Windows
	GOOS=windows $(GO) build ./...
	GOOS=windows $(GO) vet ./...

bench: ## benchmarks, in minutes: gateway accept side by side with a durable ceiling, saturated and at paced loads, accept with 100,000 waiting, syncs and bytes written per ticket, memory in a burst, idle CPU, store size and retention, cloud ingest, sync frames read and written, sync replay and idle links, the fleet's counts behind the cloud's /metrics, HQ at a small chain scale (BENCH_SMALL_*; make bench-scale for the full size)
	$(GO) test -run '^$$' -bench 'BenchmarkAccept(SideBySide|AtRates|Backlog)$$|BenchmarkStoreWrites|BenchmarkBurstRSS|BenchmarkIdleCPU' -benchtime 1x -count 1 -timeout 30m ./cmd/storeprint-gateway/
	$(GO) test -run '^$$' -bench 'BenchmarkAcceptOrders|BenchmarkTimeToPaper' -benchtime 3s -count 1 ./cmd/storeprint-gateway/
	$(GO) test -run '^$$' -bench 'BenchmarkDB_Update$$' -benchtime 3s -count 1 ./gateway/badger/
	$(GO) test -run '^$$' -bench 'BenchmarkDB_Order$$|BenchmarkBadgerFloor' -benchtime 100000x -count 1 ./gateway/badger/
	$(GO) test -run '^$$' -bench 'BenchmarkBytesPerTask|BenchmarkRetention' -benchtime 1x -count 1 -timeout 60m ./gateway/
	$(GO) test -run '^$$' -bench 'BenchmarkIngest/(first-delivery|replay)/batch' -benchtime 50x -count 1 ./cloud/postgres/
	$(GO) test -run '^$$' -bench 'BenchmarkIngest/first-delivery/many' -benchtime 4000x -count 1 ./cloud/postgres/
	$(GO) test -run '^$$' -bench 'BenchmarkFleetService_Fleet' -benchtime 200x -count 1 ./cloud/postgres/
	$(GO) test -run '^$$' -bench 'BenchmarkEventsFrame' -benchtime 2s -count 1 ./sync/
	STOREPRINT_BENCH_BACKLOG=500 $(GO) test -run '^$$' -bench 'BenchmarkReplayBacklog|BenchmarkIdleLinks|BenchmarkChainReconnect' -benchtime 1x -count 1 -timeout 30m ./cmd/storeprint-cloud/
	$(MAKE) --no-print-directory bench-scale BENCH_STORES=$(BENCH_SMALL_STORES) BENCH_TASKS=$(BENCH_SMALL_TASKS)

bench-scale: ## HQ at chain scale: BENCH_STORES x BENCH_TASKS through COPY, each HQ endpoint's p50/p99, dashboard viewers, ingest
	STOREPRINT_BENCH_STORES=$(BENCH_STORES) STOREPRINT_BENCH_TASKS=$(BENCH_TASKS) \
	  $(GO) test -run '^$$' -bench BenchmarkChainScale -benchtime 1x -count 1 -timeout 3h ./cmd/storeprint-cloud/

screenshots: ## refresh docs/screenshots (README, docs/screens.md) from the browser tests (needs chromium and CJK fonts)
	@fc-list :lang=zh 2>/dev/null | grep -q . || { echo "installing CJK fonts for the screenshots"; apt-get install -y -qq fonts-noto-cjk >/dev/null; }
	mkdir -p docs/screenshots
	STOREPRINT_SCREENSHOTS=$(CURDIR)/docs/screenshots $(GO) test -count=1 -run '^TestBrowser' ./gateway/http/ ./cmd/...

clean: ## remove build output, packages and demo data
	rm -rf $(BIN) $(DIST) demo-out
