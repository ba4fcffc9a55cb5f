# Trickle — build, run, test, bench.
#
#   make build   generate the widget when its inputs changed (wasm, loader,
#                wasm_exec.js, compressed copies) into assets/widget/,
#                then build bin/trickle
#   make dist    the npm packages trickle-answer and trickle-answer-highlight
#                from the built widget: dist/trickle-answer/, dist/trickle-answer.tgz
#                and the same for trickle-answer-highlight
#   make run     build, then start the relay on 127.0.0.1:8080
#   make fleet   build, then three relays sharing Redis behind nginx
#   make test    everything CI checks (native, js/wasm on Node, the page's
#                JavaScript on Node, Chromium)
#   make bench   benchmarks and side-by-side comparisons (not run in CI)
#   make size    what the widget's .wasm is made of, by Go package, beside
#                the floor (goldmark + GFM + the Go runtime)
#   make bench-compare [BASE=<commit>]  the page's cost of the work tree's
#                widget against BASE's (default: the last tag, else main)
#                and streaming-markdown, five interleaved runs in one
#                Chromium (bench/browser -base; docs/PERFORMANCE.md)
#   make orca    the lab check with a real screen reader: what Orca says while
#                an answer streams (not run in CI; docs/testing.md#orca)
#   make screenshots  the README's pictures, from headless Chromium

GO        ?= go
GOROOT    := $(shell $(GO) env GOROOT)
WASM_EXEC := $(GOROOT)/lib/wasm
WIDGET    := assets/widget
STATICCHECK := v0.8.2
PURE_PKGS := ./sse/... ./stream/... ./render/... ./a11y/... ./internal/jsonx/... ./internal/htmlx/... ./internal/buffering/... ./wasm/protocol/... ./wasm/element/...
export PATH := $(PATH):$(WASM_EXEC)

.PHONY: all build widget dist run fleet test test-native test-wasm test-js e2e-resets lint bench bench-compare size orca screenshots clean

all: build

build: widget
	$(GO) build -o bin/trickle ./cmd/trickle

# The widget: Go compiled to js/wasm, the toolchain's own wasm_exec.js, the
# loader and stylesheet, content-hashed names and precompressed copies.
# Built only when one of its inputs changed: the repository's Go files the
# widget and the build tool compile (go list, so a new package is seen), the
# scripts and stylesheet under wasm/web (not its tests or node_modules),
# go.mod/go.sum and the toolchain's wasm_exec.js, and internal/relite, which
# the build puts in place of regexp (wasm/internal/stdswap).
# bin/widget-inputs holds the list of inputs and is rewritten only when the
# list changes, so a deleted or renamed input also rebuilds. `make -B widget`
# forces a build.
WIDGET_GO := $(shell GOOS=js GOARCH=wasm $(GO) list -deps -f '{{if and .Module .Module.Main}}{{$$d := .Dir}}{{range .GoFiles}}{{$$d}}/{{.}} {{end}}{{range .EmbedFiles}}{{$$d}}/{{.}} {{end}}{{end}}' ./wasm/cmd/... 2>/dev/null) \
             $(shell $(GO) list -deps -f '{{if and .Module .Module.Main}}{{$$d := .Dir}}{{range .GoFiles}}{{$$d}}/{{.}} {{end}}{{end}}' ./wasm/internal/build 2>/dev/null)
WIDGET_IN := $(sort $(patsubst $(CURDIR)/%,%,$(WIDGET_GO)) $(filter-out %_test.go,$(wildcard internal/relite/*.go)) $(wildcard wasm/web/*.js wasm/web/early/*.js wasm/web/*.css) go.mod go.sum $(wildcard $(WASM_EXEC)/wasm_exec.js))

widget: $(WIDGET)/manifest.json

$(WIDGET)/manifest.json: $(WIDGET_IN) bin/widget-inputs
	$(GO) run ./wasm/internal/build -go $(GO) -out $(WIDGET)

# Rewritten while the Makefile is read (not by a rule), so that `make -q
# widget` can still say whether the widget is up to date.
$(shell mkdir -p bin; echo '$(WIDGET_IN)' | cmp -s - bin/widget-inputs || echo '$(WIDGET_IN)' > bin/widget-inputs)

# The npm package (docs/package.md): the widget's files as ES modules and
# assets beside them, types, the custom-elements manifest; npm pack makes
# the tarball. VERSION is the package's version.
# The highlighting build is its own package beside it,
# dist/trickle-answer-highlight (and .tgz), which trickle-answer/highlight
# imports. CHANGELOG.md's top entry must be VERSION.
dist: widget
	$(GO) run ./wasm/internal/build -out $(WIDGET) -pack dist/trickle-answer -version-file VERSION -changelog CHANGELOG.md
	cd dist && rm -f trickle-answer*.tgz && for p in trickle-answer trickle-answer-highlight; do npm pack --silent ./$$p >/dev/null && mv $$p-$$(cat ../VERSION).tgz $$p.tgz || exit 1; done
	@ls -l dist/trickle-answer.tgz dist/trickle-answer-highlight.tgz

# A second `make run` with nothing changed only checks the widget's inputs
# and lets go build find bin/trickle up to date: /healthz answers in about
# a second. ARGS go to trickle serve (make run ARGS='--addr 127.0.0.1:9090').
run: build
	./bin/trickle serve $(ARGS)

# A redis-server, three relays sharing it and nginx round-robin in front,
# on loopback, until Ctrl-C (docs/fleet.md; deploy/fleet/run.sh takes PORT,
# RELAY_PORTS, REDIS_PORT and RELAY_ARGS from the environment).
fleet: build
	./deploy/fleet/run.sh

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
# render, and goldmark's own tests (the CommonMark spec, its extensions'
# cases), run with regexp swapped for internal/relite, as the default widget
# has it (wasm/internal/stdswap).
# The relay's tests run twice: with the memory store, then with the Redis
# store (a redis-server the tests start on a free loopback port). The
# widget's Go side runs in a Web Worker; the Chromium suites run a second
# time with it forced onto the page's main thread (worker="off"), the
# fallback for pages that cannot make a worker.
test-native: e2e-resets
	$(GO) test -count=1 -timeout 20m ./...
	$(GO) test -count=1 $$($(GO) run ./wasm/internal/stdswap/overlay bin/stdswap) ./render/ github.com/yuin/goldmark github.com/yuin/goldmark/extension github.com/yuin/goldmark/util
	TRICKLE_TEST_STORE=redis $(GO) test -count=1 -timeout 20m ./relay/
	TRICKLE_WIDGET_THREAD=main $(GO) test -count=1 -timeout 20m ./wasm/e2e ./examples

# The pure packages (the widget's Session, wasm/element, included) also run
# compiled to js/wasm, on Node.
# GOMODCACHE is passed on so tests on Node can read oracle data shipped in
# modules (a11y reads uax29's SentenceBreakTest table).
# GOROOT likewise for the toolchain's own (htmlx reads html's entity table).
test-wasm:
	GOMODCACHE="$$($(GO) env GOMODCACHE)" GOROOT="$(GOROOT)" GOOS=js GOARCH=wasm $(GO) test -count=1 -short $(PURE_PKGS)

# The page's JavaScript (wasm/web): node --test over its pure functions
# (frame merging, tail patching, the highlighter sanitizer, the worker's
# inbox) and the entries imported on a server. Its one dependency, jsdom,
# is pinned in wasm/web/package-lock.json; npm ci installs it when the lock
# file is newer than what is installed.
test-js: wasm/web/node_modules/.package-lock.json
	cd wasm/web && npm test

wasm/web/node_modules/.package-lock.json: wasm/web/package.json wasm/web/package-lock.json
	cd wasm/web && npm ci --no-audit --no-fund
	@touch $@

# The CSS resets pages load (Tailwind's v3 and v4 preflight, Bootstrap's
# Reboot, modern-normalize), for the Chromium test of the answer's
# typography under each (wasm/e2e/resets_test.go): pinned in
# wasm/e2e/testdata/resets/package-lock.json, installed by npm ci when the
# lock file is newer than what is installed.
e2e-resets: wasm/e2e/testdata/resets/node_modules/.package-lock.json

wasm/e2e/testdata/resets/node_modules/.package-lock.json: wasm/e2e/testdata/resets/package.json wasm/e2e/testdata/resets/package-lock.json
	cd wasm/e2e/testdata/resets && npm ci --no-audit --no-fund
	@touch $@

# The AI SDK's own package, pinned in stream/testdata/aisdk/package-lock.json:
# its record.mjs writes the ai-sdk and text recordings the stream tests
# replay, and TestTheAISDKRecordingsAreWhatTheAIPackageSends runs it again
# to check them (installing it itself when this has not).
AISDK := stream/testdata/aisdk
$(AISDK)/node_modules/.package-lock.json: $(AISDK)/package.json $(AISDK)/package-lock.json
	cd $(AISDK) && npm ci --no-audit --no-fund
	@touch $@

test-native: $(AISDK)/node_modules/.package-lock.json

# The AI SDK's current major (ai@7), pinned in
# stream/testdata/aisdk7/package-lock.json: its record.mjs writes the
# ai-sdk7 recordings (tool approvals, sources), checked by the same test.
AISDK7 := stream/testdata/aisdk7
$(AISDK7)/node_modules/.package-lock.json: $(AISDK7)/package.json $(AISDK7)/package-lock.json
	cd $(AISDK7) && npm ci --no-audit --no-fund
	@touch $@

test-native: $(AISDK7)/node_modules/.package-lock.json

# The AG-UI TypeScript SDK (@ag-ui/core, @ag-ui/encoder), pinned in
# stream/testdata/agui/package-lock.json: its record.mjs writes the ag-ui
# recordings, and TestTheAGUIRecordingsAreWhatTheAGUISDKWrites runs it
# again to check them (installing it itself when this has not).
AGUI := stream/testdata/agui
$(AGUI)/node_modules/.package-lock.json: $(AGUI)/package.json $(AGUI)/package-lock.json
	cd $(AGUI) && npm ci --no-audit --no-fund
	@touch $@

test-native: $(AGUI)/node_modules/.package-lock.json

# The official openai package, pinned in relay/testdata/sdk/package-lock.json:
# relay/sdk_test.go reads the relay's streams with it, as SDK code does.
SDK := relay/testdata/sdk
$(SDK)/node_modules/.package-lock.json: $(SDK)/package.json $(SDK)/package-lock.json
	cd $(SDK) && npm ci --no-audit --no-fund
	@touch $@

test-native: $(SDK)/node_modules/.package-lock.json

# The AI SDK again, pinned in wasm/e2e/testdata/anypage/package-lock.json,
# for the page with a Node backend of its own that
# wasm/e2e/anypage_test.go runs (backend.mjs answers with the package's
# server helpers over its mock model).
ANYPAGE := wasm/e2e/testdata/anypage
$(ANYPAGE)/node_modules/.package-lock.json: $(ANYPAGE)/package.json $(ANYPAGE)/package-lock.json
	cd $(ANYPAGE) && npm ci --no-audit --no-fund
	@touch $@

test-native: $(ANYPAGE)/node_modules/.package-lock.json

# The AI SDK at v6 (whose docs write a route with toUIMessageStreamResponse;
# v7, the current major, writes it with createUIMessageStreamResponse), pinned
# in wasm/e2e/testdata/aisdk-route/package-lock.json,
# for the chat route written as the AI SDK's docs write one (server.mjs:
# convertToModelMessages, streamText, toUIMessageStreamResponse over the
# package's mock model) that wasm/e2e/aisdk_route_test.go talks to with
# <trickle-chat protocol="ai-sdk">.
AISDKROUTE := wasm/e2e/testdata/aisdk-route
$(AISDKROUTE)/node_modules/.package-lock.json: $(AISDKROUTE)/package.json $(AISDKROUTE)/package-lock.json
	cd $(AISDKROUTE) && npm ci --no-audit --no-fund
	@touch $@

test-native: $(AISDKROUTE)/node_modules/.package-lock.json

# temml, pinned in wasm/e2e/testdata/math/package-lock.json: the TeX to
# MathML converter the package's math entry loads, which
# wasm/e2e/math_entry_test.go serves to its page.
MATHPKG := wasm/e2e/testdata/math
$(MATHPKG)/node_modules/.package-lock.json: $(MATHPKG)/package.json $(MATHPKG)/package-lock.json
	cd $(MATHPKG) && npm ci --no-audit --no-fund
	@touch $@

test-native: $(MATHPKG)/node_modules/.package-lock.json

test: lint build dist test-js test-native test-wasm

bench:
	./bench/run.sh

# What the widget's .wasm is made of: its size as shipped and brotli beside
# the floor (goldmark with GFM and the Go runtime alone), and its code by Go
# package from the name section (docs/PERFORMANCE.md#widget-size).
size:
	$(GO) run ./wasm/internal/size
BASE ?= $(shell git describe --tags --abbrev=0 2>/dev/null || echo main)
bench-compare: widget
	bash bench/browser/run.sh -base $(BASE) $(ARGS)

# Orca, Chromium with a window, Xvfb, a private session bus and the AT-SPI
# bus, speech-dispatcher's dummy output: prints what Orca said on the
# answer page and in a <trickle-chat> and fails when an expectation does
# (bench/orca). ARGS go to the lab (make orca ARGS='-scenarios chat -keep').
orca: build
	./bench/orca/lab.sh $(ARGS)

# The pictures in README.md and docs/ (docs/screenshots/*.png), taken in
# headless Chromium by the example tests that show a page (-screenshots
# saves them; the simulated model runs at trickle serve's default pace).
# Not part of make test; TestEveryScreenshotTheDocsShowExists is.
screenshots: build
	$(GO) test -count=1 -run 'Page|Lab|Reading' ./examples -screenshots ../docs/screenshots

clean:
	rm -rf bin dist
	find $(WIDGET) -type f ! -name README.md -delete
