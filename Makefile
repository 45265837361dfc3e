# facefusion-hpc. `make demo` runs the main job on the embedded default; `make test` runs every
# test. Both install what a fresh Debian 12 machine lacks and fetch the runtime, models and
# sample media into .cache/ (git-ignored) once.
SHELL := /bin/bash
CACHE ?= $(CURDIR)/.cache
GO ?= go
BIN := bin/facefusion
export FACEFUSION_CACHE := $(CACHE)
# go-nvml's cgo code uses deprecated NVML declarations; its warnings are not ours.
export CGO_CFLAGS := -O2 -Wno-deprecated-declarations

# Debian packages the build, the demo and the tests need.
DEB_PKGS := ffmpeg g++ pkg-config ca-certificates \
	libdlib-dev libblas-dev liblapack-dev \
	openmpi-bin libopenmpi-dev slurmctld slurmd slurm-client munge

.PHONY: all deps fetch build demo test vet fmt-check bench clean gpu-check
all: build

# Install only what is missing (dpkg-query is the truth; apt-get runs only when needed).
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "deps: installing $$missing" >&2; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@# npm may come with a Node.js that is not Debian's: only install Debian's when there is none.
	@command -v npm >/dev/null || { $(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq --no-install-recommends npm >/dev/null; }
	@command -v $(GO) >/dev/null || { echo "deps: Go 1.26 is needed (https://go.dev/dl)"; exit 1; }

fetch: deps
	@bash internal/deps/fetch.sh $(CACHE)

build: deps
	$(GO) build -o $(BIN) ./cmd/facefusion

$(CACHE)/demo/target.mp4: | fetch
	bash internal/deps/demo-clip.sh $(CACHE)/samples/astronaut.png $@

# The main job: Grace Hopper's face into the sample clip; the output path is the last line.
demo: fetch build $(CACHE)/demo/target.mp4
	@mkdir -p out
	@./$(BIN) run -s $(CACHE)/samples/grace_hopper.jpg -t $(CACHE)/demo/target.mp4 -o out/demo.mp4 --force >/dev/null
	@echo "$(CURDIR)/out/demo.mp4"

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*')); \
	if [ -n "$$out" ]; then echo "gofmt: not formatted: $$out"; exit 1; fi

vet:
	$(GO) vet ./...

test: fetch fmt-check vet $(CACHE)/demo/target.mp4
	$(GO) build -o $(BIN) ./cmd/facefusion
	$(GO) test -count=1 -timeout 25m ./...

# Per-kernel and per-stage costs, processing alone, the codec floor and end-to-end frames/s on
# the demo clip, then the distributed numbers (2 ranks over 1, rank 0's join share).
bench: fetch build $(CACHE)/demo/target.mp4
	$(GO) test -run '^$$' -bench . -benchmem ./internal/raster ./internal/swap ./internal/landmark ./infer
	$(GO) test -run '^$$' -bench . -benchtime 3s ./internal/pipeline
	$(GO) test -run '^$$' -bench . -benchtime 1x ./cmd/facefusion

# On a machine with an NVIDIA GPU: the CUDA provider's frames/s at batch 1 and batched.
gpu-check: fetch
	bash internal/deps/gpu-check.sh $(CACHE)

clean:
	rm -rf bin out
