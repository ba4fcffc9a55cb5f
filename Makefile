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
PURE_PKGS := ./sse/... ./stream/... ./render/... ./a11y/... ./internal/jsonx/... ./internal/buffering/... ./internal/widget/...
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

# go.mod and go.sum must be what `go mod tidy` would write (direct
# dependencies outside `// indirect`, no stale sums); -diff prints the change
# and fails without touching the files.
lint:
	@$(GO) mod tidy -diff || (echo "go.mod/go.sum not tidy: run 'go mod tidy' and commit the result"; exit 1)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "not gofmt-ed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK) ./...
	GOOS=js GOARCH=wasm $(GO) vet $(PURE_PKGS) ./wasm/...

# Includes the browser tests (real headless Chromium, chromedp), which need
# the widget built; under CI=true they fail rather than skip without Chromium.
test-native:
	$(GO) test -count=1 -timeout 20m ./...

# The pure packages (the widget's Session, internal/widget, included) also run
# compiled to js/wasm, on Node.
# GOMODCACHE is passed on so tests on Node can read oracle data shipped in
# modules (a11y reads uax29's SentenceBreakTest table).
test-wasm:
	GOMODCACHE="$$($(GO) env GOMODCACHE)" GOOS=js GOARCH=wasm $(GO) test -count=1 -short $(PURE_PKGS)

test: lint build test-native test-wasm

bench:
	./bench/run.sh

clean:
	rm -rf bin
	find $(WIDGET) -type f ! -name README.md -delete
