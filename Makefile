# facefusion-hpc. `make demo` runs the main job on the embedded default; `make test` runs every
# test, `make check` the fast tier (docs/development.md, Tests). They install what a fresh
# Debian 12 machine lacks and fetch the runtime, models and sample media into .cache/
# (git-ignored) once.
SHELL := /bin/bash
CACHE ?= $(CURDIR)/.cache
GO ?= go
BIN := bin/facefusion
# -buildvcs=auto: the binary records the commit it is built from (facefusion --version), even
# where GOFLAGS turns that off; built outside a git checkout, it records none. Where git refuses
# the checkout (another user's: "dubious ownership"), Go would refuse to build: then, or with
# BUILDVCS=false, the binary says "commit unknown".
BUILDVCS ?= $(shell git status --porcelain >/dev/null 2>&1 && echo auto || echo false)
# The binary records where it was linked against libmpi (RUNPATH): each -L folder of ompi-c
# and the folder libmpi.so's soname really lives in, so it starts from cron, a login shell or
# a job that loads no MPI module. Recursive (=): pkg-config is asked when a recipe runs, after
# need-build has written any ompi-c.pc it needs.
MPI_RUNPATH = $(shell pkg-config --libs-only-L ompi-c 2>/dev/null | tr ' ' '\n' | sed -n 's/^-L//p' | \
	while read -r d; do echo "$$d"; [ -e "$$d/libmpi.so" ] && dirname "$$(readlink -f "$$d/libmpi.so")"; done | \
	awk 'NF && !seen[$$0]++' | paste -sd: -)
GOBUILD = CGO_LDFLAGS="$$($(GO) env CGO_LDFLAGS)$(if $(MPI_RUNPATH), -Wl$(comma)--enable-new-dtags -Wl$(comma)-rpath$(comma)$(MPI_RUNPATH))" \
	$(GO) build -buildvcs=$(BUILDVCS)
comma := ,
export FACEFUSION_CACHE := $(CACHE)
# go-nvml's cgo code uses deprecated NVML declarations; its warnings are not ours.
export CGO_CFLAGS := -O2 -Wno-deprecated-declarations

# What each target needs, as rows of internal/deps/need.sh's table: checked by command,
# pkg-config or file; installed from Debian only where something is missing and apt-get can.
NEED_BUILD := go cc pkg-config mpi libjpeg certs
NEED_TEST := ffmpeg g++ dlib mpirun slurm lmod strace oracle-python
# The fast tier's: short ffmpeg runs, no launcher, no oracle.
NEED_CHECK := ffmpeg
# Where need.sh writes an ompi-c.pc made from mpicc when the site's OpenMPI has none on the
# search path; after the user's PKG_CONFIG_PATH, and removed when pkg-config finds the real one.
MPI_PC := $(CURDIR)/.build/pkgconfig
export PKG_CONFIG_PATH := $(if $(PKG_CONFIG_PATH),$(PKG_CONFIG_PATH):)$(MPI_PC)
NEED := MPI_PC_DIR=$(MPI_PC) bash internal/deps/need.sh
# make install's prefix (README, "Install on a cluster").
PREFIX ?= $(HOME)/.local

.PHONY: all deps need-build need-test need-check fetch fetch-gpu build install demo test check race lint fuzz vet fmt-check bench clean gpu-check
all: build

# Every Debian package the build, the demo and the tests need (root or sudo). The other
# targets do not depend on it: they check their tools and install only what is missing.
deps:
	@bash internal/deps/need.sh --debian

need-build:
	@$(NEED) $(NEED_BUILD)

need-test:
	@$(NEED) $(NEED_BUILD) $(NEED_TEST)

need-check:
	@$(NEED) $(NEED_BUILD) $(NEED_CHECK)

fetch:
	@bash internal/deps/fetch.sh $(CACHE)

# ONNX Runtime's CUDA and TensorRT provider libraries (npm, 179 MB packed, checked against a
# pinned sha256) into $(CACHE)/ort-gpu, once; no target above or below needs them but
# gpu-check: make install installs them when they are there.
fetch-gpu:
	@bash internal/deps/fetch-gpu.sh $(CACHE)

build: need-build
	$(GOBUILD) -o $(BIN) ./cmd/facefusion

# The binary, runtime, models, batch script, docs and an Lmod module file under PREFIX; no root.
# The GPU provider libraries too, where make fetch-gpu has fetched them.
install: build fetch
	@bash internal/deps/install.sh "$(PREFIX)" "$(BIN)" "$(CACHE)"

$(CACHE)/demo/target.mp4: | fetch
	@$(NEED) ffmpeg
	bash internal/deps/demo-clip.sh $(CACHE)/samples/astronaut.png $@

# The main job: Grace Hopper's face into the sample clip; the output path is the last line.
demo: fetch build $(CACHE)/demo/target.mp4
	@$(NEED) ffmpeg
	@mkdir -p out
	@./$(BIN) run -s $(CACHE)/samples/grace_hopper.jpg -t $(CACHE)/demo/target.mp4 -o out/demo.mp4 --force >/dev/null
	@echo "$(CURDIR)/out/demo.mp4"

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*')); \
	if [ -n "$$out" ]; then echo "gofmt: not formatted: $$out"; exit 1; fi

vet: need-build
	$(GO) vet ./...

# The fast tier, while editing: gofmt, vet and go test -short, which skips (saying "full tier")
# what launches mpirun or Slurm, runs the binary end to end, runs ffmpeg at length or runs an
# oracle (FaceFusion's code, dlib's C++, OpenCV). cmd/facefusion/e2e's packages hold only such
# tests: vet has compiled them, and linking their test binaries to skip every test cost 3
# CPU-seconds.
check: need-check fetch fmt-check vet
	$(GO) test -short -count=1 $$($(GO) list ./... | grep -v /cmd/facefusion/e2e/)

# staticcheck, at go.mod's tool version; collective's build without MPI (nompi) too.
lint: need-build
	$(GO) tool staticcheck ./...
	$(GO) tool staticcheck -tags nompi ./collective/...

# The race detector on the packages whose goroutines share memory: the frame stream and its
# workers, the shared engines' batching, the single-process Comm and its requests, the control
# rounds, the join and the batch runner. -short: what runs there in the fast tier.
RACE_PKGS := ./internal/pipeline ./infer ./collective ./internal/driver ./internal/join ./internal/batch
race: need-check fetch
	$(GO) test -race -short -count=1 $(RACE_PKGS)

# Every test (the full tier: CI runs this), after the linter, the race step and short fuzz runs.
test: need-test fetch fmt-check vet lint race fuzz $(CACHE)/demo/target.mp4
	$(GOBUILD) -o $(BIN) ./cmd/facefusion
	$(GO) test -count=1 -timeout 25m ./...

# Every fuzz target for FUZZTIME (2000x: 2,000 inputs) each, about half a minute in all
# (internal/deps/fuzz.sh); a crash fails it and leaves its input in the package's testdata/fuzz,
# which go test then runs.
fuzz: need-test fetch
	@GO=$(GO) bash internal/deps/fuzz.sh

# Per-kernel and per-stage costs, processing alone, the codec floor and end-to-end frames/s on
# the demo clip, then the distributed numbers (2 ranks over 1, rank 0's join share).
bench: fetch build $(CACHE)/demo/target.mp4
	$(GO) test -run '^$$' -bench . -benchmem ./internal/raster ./internal/swap ./internal/landmark ./infer/... ./internal/models/...
	$(GO) test -run '^$$' -bench . -benchtime 3s ./internal/pipeline
	$(GO) test -run '^$$' -bench HashBlocks ./lustre
	$(GO) test -run '^$$' -bench . -benchtime 1x ./cmd/facefusion/...

# A GPU node's check: the CUDA provider (fetch-gpu's, as a plugin library) on every catalog
# stand-in and the embedded default against the CPU, frames/s at batch 1, 8 and 32 with 1 and 8
# workers, GPU memory per rank (NVML), pinning, NVENC/NVDEC. Builds a bundle in
# .build/gpu-check/bundle and cuts it into checked parts of 56 MiB in .build/gpu-check/parts
# (a device call carries one: docs/development.md), then rehearses it here from those parts:
# without a GPU it runs on the CPU, names what it could not verify and exits 2.
gpu-check: fetch fetch-gpu $(CACHE)/demo/target.mp4
	bash internal/deps/gpu-check.sh $(CACHE)

clean:
	rm -rf bin out .build
