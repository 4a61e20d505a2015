# cordon — see README.md. The two commands: `make probe` and `make test`.
GO ?= go
PKGS ?= ./...

.PHONY: test bench fuzz lint cross probe

test:
	$(GO) test -count=1 $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

fuzz:
	@echo "fuzz targets are added with the policy package"

lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo 'gofmt needed'; exit 1; }
	$(GO) vet $(PKGS)

cross:
	GOOS=linux GOARCH=amd64 $(GO) build $(PKGS)

probe:
	@echo "sandbox-probe is not built yet"
