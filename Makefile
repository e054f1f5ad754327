# storeprint: make help lists the targets.
SHELL := /usr/bin/env bash
GO ?= go
BIN := bin
STATICCHECK_VERSION := v0.8.2
FUZZTIME ?= 10s

.PHONY: help build demo test unit fuzz lint bench windows screenshots clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

build: ## build the three binaries into bin/
	$(GO) build -o $(BIN)/ ./cmd/...

demo: build ## run a gateway with two simulated printers and post sample orders (Ctrl-C stops)
	./scripts/demo.sh

test: lint windows fuzz unit ## everything CI checks: lint, Windows build, tests, short fuzz runs

unit: ## the test suite (starts its own PostgreSQL)
	$(GO) test -count=1 -timeout 20m ./...

fuzz: ## short fuzz runs of every parser (FUZZTIME=10s each)
	@set -e; log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f"; \
	    if ! $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg >$$log 2>&1; then \
	      tail -40 $$log; exit 1; \
	    fi; \
	  done; \
	done

lint: ## gofmt, go vet and staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

windows: ## cross-compile and vet for Windows
	GOOS=windows $(GO) build ./...
	GOOS=windows $(GO) vet ./...

bench: ## benchmarks: gateway throughput, latency and memory, store size and retention, cloud ingest, sync replay and idle links
	$(GO) test -run '^$$' -bench . -benchtime 3s -count 1 ./cmd/storeprint-gateway/ ./gateway/badger/
	$(GO) test -run '^$$' -bench 'BenchmarkBytesPerTask|BenchmarkRetention' -benchtime 1x -count 1 -timeout 60m ./gateway/
	$(GO) test -run '^$$' -bench 'BenchmarkIngest/(first-delivery|replay)/batch' -benchtime 50x -count 1 ./cloud/postgres/
	$(GO) test -run '^$$' -bench 'BenchmarkIngest/first-delivery/many' -benchtime 4000x -count 1 ./cloud/postgres/
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 ./cmd/storeprint-cloud/

screenshots: ## refresh the README's screenshots from the browser tests (needs chromium and CJK fonts)
	@fc-list :lang=zh 2>/dev/null | grep -q . || { echo "installing CJK fonts for the screenshots"; apt-get install -y -qq fonts-noto-cjk >/dev/null; }
	mkdir -p docs/screenshots
	STOREPRINT_SCREENSHOTS=$(CURDIR)/docs/screenshots $(GO) test -count=1 -run '^TestBrowser' ./cmd/...

clean: ## remove build output and demo data
	rm -rf $(BIN) demo-out
