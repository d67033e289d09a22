# `make test` is the one command that runs every check and test. It needs
# only Go (and gcc for -race).
GO ?= go

.PHONY: test vet fmtcheck unit bench build generate

test: fmtcheck vet unit

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
