# Trickle — build, run, test, bench.
#
#   make build   generate the widget (wasm, loader, wasm_exec.js, compressed
#                copies) into examples/widget/, then build bin/trickle
#   make run     build, then start the relay on 127.0.0.1:8080
#   make test    everything CI checks (native, js/wasm on Node, Chromium)
#   make bench   benchmarks and side-by-side comparisons (not run in CI)

GO        ?= go
GOROOT    := $(shell $(GO) env GOROOT)
WASM_EXEC := $(GOROOT)/lib/wasm
WIDGET    := examples/widget
STATICCHECK := v0.8.2
PURE_PKGS := ./sse/... ./stream/... ./render/... ./a11y/... ./internal/jsonx/...
export PATH := $(PATH):$(WASM_EXEC)

.PHONY: all build widget run test test-native test-wasm lint bench clean

all: build

build: widget
	$(GO) build -o bin/trickle ./cmd/trickle

# The widget: Go compiled to js/wasm, the toolchain's own wasm_exec.js, the
# loader and stylesheet, content-hashed names and precompressed copies.
widget:
	$(GO) run ./wasm/internal/build -out $(WIDGET)

run: build
	./bin/trickle serve

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "not gofmt-ed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK) ./...
	GOOS=js GOARCH=wasm $(GO) vet $(PURE_PKGS) ./wasm/...

# Includes the browser tests (real headless Chromium, chromedp), which need
# the widget built; under CI=true they fail rather than skip without Chromium.
# The relay's tests run twice: with the memory store, then with the Redis
# store (a redis-server the tests start on a free loopback port).
test-native:
	$(GO) test -count=1 -timeout 20m ./...
	TRICKLE_TEST_STORE=redis $(GO) test -count=1 -timeout 20m ./relay/

# The pure packages (and the widget's Session, package wasm) also run
# compiled to js/wasm, on Node.
# GOMODCACHE is passed on so tests on Node can read oracle data shipped in
# modules (a11y reads uax29's SentenceBreakTest table).
test-wasm:
	GOMODCACHE="$$($(GO) env GOMODCACHE)" GOOS=js GOARCH=wasm $(GO) test -count=1 -short $(PURE_PKGS) ./wasm

test: lint build test-native test-wasm

bench:
	./bench/run.sh

clean:
	rm -rf bin
	find $(WIDGET) -type f ! -name README.md -delete
