# cordon — see README.md. The two commands: `make probe` and `make test`.
#
# Recipes are thin; the logic is in scripts/*.sh (each documents its knobs).
# Provisioning (root with apt only): bubblewrap, docker.io, busybox-static,
# strace and dash (the command gate's execution oracle);
# a private dockerd under $(BUILD_DIR)/docker; a local busybox test image
# built without any registry; a private single-node Kubernetes cluster
# under $(BUILD_DIR)/kube (etcd-server, containerd, runc,
# containernetworking-plugins from apt; Kubernetes, kubectl included, built
# from the Go module proxy). Tests read DOCKER_HOST, CORDON_DOCKER_IMAGE,
# KUBECONFIG, CORDON_KUBE_IMAGE, CORDON_REQUIRE and CORDON_UNPRIVILEGED
# (see internal/testenv).

GO ?= go
BUILD_DIR ?= $(CURDIR)/build
# Packages for go test, go vet and bench.
PKGS ?= ./...
# Extra go test flags, e.g. make test TESTFLAGS='-run Conformance -v'.
TESTFLAGS ?=
# Kernel-facing packages run a second time as uid 65534 (root only).
# Packages that do not exist yet are skipped.
UNPRIV_PKGS ?= ./executor/bwrap/ ./executor/landlock/
# Packages whose conformance tests `make conformance` runs, and the test
# name pattern: conformance.Run in each backend (TestConformance*), and in
# ./conformance the suite against executor.Local (TestRunLocal: functional
# cases pass, isolation leaks are caught) and against executors built to
# fail it (a leaky one, a no-op, a refuser, a mini bwrap).
CONFORMANCE_PKGS ?= ./executor/landlock/ ./executor/bwrap/ ./executor/docker/ ./executor/seatbelt/ ./conformance/
CONFORMANCE_RUN ?= Conformance|RunLocal|CheckCatches|CheckNoop|CheckRefuser|CheckScratch|MiniBwrap
# Fuzzing: targets are discovered in FUZZ_PKGS; each runs for FUZZTIME.
FUZZ_PKGS ?= ./...
FUZZTIME ?= 20s
BENCH ?= .
BENCHTIME ?= 1s
CROSS_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64
ACTIONLINT_VERSION ?= v1.7.12
# auto (private dockerd as root), external (the caller's DOCKER_HOST), off.
CORDON_DOCKER ?= auto
# auto (a private single-node Kubernetes cluster as root on Linux), off.
CORDON_KUBE ?= auto
# sandbox-probe arguments and an optional file for its output.
PROBE_ARGS ?=
PROBE_OUT ?=

export GO BUILD_DIR PKGS TESTFLAGS UNPRIV_PKGS CONFORMANCE_PKGS CONFORMANCE_RUN \
	FUZZ_PKGS FUZZTIME CROSS_TARGETS \
	ACTIONLINT_VERSION CORDON_DOCKER CORDON_KUBE PROBE_ARGS PROBE_OUT

S := scripts

.PHONY: all test test-unpriv bench fuzz lint cross conformance probe \
	provision docker-up docker-down kube-up kube-down clean help

all: lint test

## test: provision, go test ./... (private dockerd and test image), then the unprivileged run
test:
	@$(S)/with-env.sh $(S)/test.sh

## test-unpriv: only the second run of UNPRIV_PKGS as uid 65534 (root only)
test-unpriv:
	@$(S)/with-env.sh $(S)/unpriv.sh

## bench: benchmarks of PKGS (BENCH, BENCHTIME), with the test environment
bench:
	@$(S)/with-env.sh $(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -benchmem $(PKGS)

## fuzz: every Fuzz* target in FUZZ_PKGS for FUZZTIME each
fuzz:
	@$(S)/fuzz.sh

## lint: gofmt check, go vet, actionlint (pinned), shellcheck
lint:
	@$(S)/lint.sh

## cross: build (and vet) for CROSS_TARGETS with CGO_ENABLED=0
cross:
	@$(S)/cross.sh

## conformance: the conformance tests of every backend package present
conformance:
	@$(S)/with-env.sh $(S)/conformance.sh

## probe: provision, build build/bin/sandbox-probe (CGO_ENABLED=0) and run it
probe:
	@$(S)/probe.sh

## provision: install missing packages (root with apt only)
provision:
	@$(S)/provision.sh test

## docker-up: start the private dockerd and build the test image; leaves it running (set -a; . build/docker/env; set +a)
docker-up:
	@$(S)/docker.sh up && $(S)/docker.sh image && cat $(BUILD_DIR)/docker/env

## docker-down: stop the private dockerd, its containerd and shims
docker-down:
	@$(S)/docker.sh down

## kube-up: provision, build Kubernetes (cached), start the private single-node cluster; leaves it running (set -a; . build/kube/env; set +a)
kube-up: provision
	@$(S)/kube.sh up && cat $(BUILD_DIR)/kube/env

## kube-down: stop the private cluster and remove its state
kube-down:
	@$(S)/kube.sh down

## clean: stop the private dockerd and cluster and remove the build directory
clean: docker-down kube-down
	rm -rf $(BUILD_DIR)

## help: list the targets
help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)
