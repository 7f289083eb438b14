# arm-hardening-gem5: the front door.
#   make            deps, builds, the quick experiment set, its figures, and its
#                   comparison with the committed results
#   make test       the test suite (what CI runs)
# Build outputs live in $(ARTIFACT_CACHE), never in the checkout. A user's
# results and figures go to out/ (ignored by git): nothing but 'make publish'
# writes the committed record (results/, plots/out/, the docs' tables).

SHELL := /bin/bash
.DEFAULT_GOAL := all

ARTIFACT_CACHE ?= $(HOME)/.cache/arm-hardening-gem5
export ARTIFACT_CACHE
GEM5_REPO ?= https://github.com/gem5/gem5.git
export GEM5_REPO
JOBS ?= $(shell nproc)
# gem5's binary: opt (the committed results') or fast (no asserts or debug
# output; a second full compile; its runs are cached and keyed apart).
GEM5_VARIANT ?= opt
VENV ?= .venv
PY := $(VENV)/bin/python
BUILD := $(PY) -m builders -j $(JOBS)

.PHONY: all deps venv gem5 kernel kernels disk initramfs experiments compare committed-reference sweep qemu-reference figures publish test dist test-dist

# The quick experiment set; EXPERIMENTS=all runs every experiment. make figures
# draws every figure whose results exist (FIGURES="a b" only those).
EXPERIMENTS ?=
FIGURES ?=
# Where a run's CSVs and figures go: out/ unless the committed record is asked
# for by name (make publish).
RESULTS_DIR ?= out/results
FIGURES_DIR ?= out/figures
COMMITTED_RESULTS := results
COMMITTED_FIGURES := plots/out

# experiments builds exactly the kernels its runs use (make kernels builds all).
# DRY_RUN=1 (make, make experiments): what would be built and simulated, with
# host times from the recorded runs; builds and simulates nothing.
ifdef DRY_RUN
all: experiments
else
all: deps gem5 disk experiments figures compare
endif

deps:
	@bash builders/install-deps.sh
	@$(MAKE) --no-print-directory venv

venv: $(VENV)/.requirements-stamp

$(VENV)/.requirements-stamp: requirements.txt requirements.lock
	@command -v python3 >/dev/null || { echo "error: python3 is missing; run 'make deps' as root" >&2; exit 1; }
	@test -x $(PY) || /usr/bin/python3 -m venv $(VENV) || python3 -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements.lock
	@touch $@

gem5: venv
	@$(BUILD) gem5 --variant $(GEM5_VARIANT)

VARIANT ?= baseline
kernel: venv
	@$(BUILD) kernel $(VARIANT)

kernels: venv
	@$(BUILD) kernel

# ROOTFS=buildroot builds the same guest with Buildroot (disk-image/buildroot)
# from $(BUILDROOT_REPO); the default, debian, is the image every run uses.
ROOTFS ?= debian
BUILDROOT_REPO ?= https://gitlab.com/buildroot.org/buildroot.git
export BUILDROOT_REPO
disk: venv
	@$(BUILD) disk --rootfs $(ROOTFS)

# The 32-bit Arm initramfs of claim C3's runs, on gem5 and QEMU (experiments and
# make qemu-reference build it when they need it).
initramfs: venv
	@$(BUILD) initramfs

# STRICT=1 fails every skip but a missing build output's (CI sets it when the
# cache holds gem5, so a test that stops running is a failure, not a skip).
test: venv
	@$(PY) -m pytest -q $(if $(STRICT),--strict-skips)

# One archive of every pinned input (this repository at HEAD, gem5's and
# Buildroot's pinned commits, the Debian packages and Python wheels the builds
# install) with SHA256SUMS, in $(DIST_DIR); GEM5_REPO and BUILDROOT_REPO must
# reach the pinned commits. test-dist makes it, then builds the baseline kernel
# and the disk image from it without network (builders/README.md).
DIST_DIR ?= out/dist
dist: venv
	@$(BUILD) dist --out $(DIST_DIR)

test-dist: venv
	@archive=$$($(BUILD) dist --out $(DIST_DIR)) && \
		DIST_ARCHIVE=$$archive $(PY) -m pytest -q tests/test_dist_offline.py

# BACKEND=slurm submits the simulations as Slurm jobs (cache on a shared
# filesystem); SLURM_ARGS adds e.g. "--slurm-partition=p --slurm-time=4:00:00".
BACKEND ?= local
SLURM_ARGS ?=
RUN_WHERE = --backend $(BACKEND) $(if $(filter slurm,$(BACKEND)),$(SLURM_ARGS))
experiments: venv
	@$(PY) -m experiments run $(if $(DRY_RUN),--dry-run) -j $(JOBS) $(RUN_WHERE) --rootfs $(ROOTFS) --gem5-variant $(GEM5_VARIANT) \
		--results-dir $(RESULTS_DIR) $(if $(filter all,$(EXPERIMENTS)),--all,$(EXPERIMENTS))
ifeq ($(EXPERIMENTS)$(DRY_RUN),all)
	@$(MAKE) --no-print-directory qemu-reference
endif

# Compare what experiments just made (RESULTS_DIR) with the committed results
# as the checkout's last commit holds them (without git, the results/ folder
# as it is): identical where the builds are the same, within
# experiments/tolerances.toml where they are not; exit 1 naming what moved.
# Only the experiments of this make are compared (EXPERIMENTS, or the quick set).
COMMITTED_REFERENCE = out/committed
# First, the docs' claims the runs measure again, committed beside re-made
# ($(FIGURES_DIR)/remade.md).
compare: experiments committed-reference
	@$(PY) -m publish.remade $(COMMITTED_REFERENCE)/results $(RESULTS_DIR) --out $(FIGURES_DIR)/remade.md
	@$(PY) -m experiments compare $(COMMITTED_REFERENCE)/results $(RESULTS_DIR) \
		$(if $(filter all,$(EXPERIMENTS)),,$(if $(EXPERIMENTS),$(EXPERIMENTS),--quick))

# The committed results as the last commit holds them, whatever the work tree's
# results/ now says.
committed-reference:
	@rm -rf $(COMMITTED_REFERENCE) && mkdir -p $(COMMITTED_REFERENCE)
	@if git rev-parse --verify -q HEAD:results >/dev/null 2>&1; then \
		git archive HEAD results | tar -x -C $(COMMITTED_REFERENCE); \
	else cp -r results $(COMMITTED_REFERENCE)/; fi

# One parameter over a list of values beside the unmodified model, e.g.
#   make sweep NAME=syscall PARAM=l2.data_latency VALUES="9 12 15" [CORE=neoverse-n1]
# CSV and figure in out/derived/.
sweep: venv
	@test -n "$(NAME)" -a -n "$(PARAM)" -a -n "$(VALUES)" || { echo "usage: make sweep NAME=<experiment> PARAM=<key> VALUES=\"v1 v2 ...\" [CORE=<core>]" >&2; exit 2; }
	@$(PY) -m experiments sweep $(NAME) -j $(JOBS) $(RUN_WHERE) --gem5-variant $(GEM5_VARIANT) \
		--param $(PARAM) --values $(VALUES) \
		$(if $(CORE),--core $(CORE))
	@$(PY) -m plots.sweep out/derived/$(if $(CORE),$(CORE)-)sweep-$(PARAM)/$(NAME).csv \
		--param $(PARAM)

# The MTE selftests and the KASAN boots once more on QEMU (-machine
# virt,mte=on -cpu max), to set gem5's verdicts beside an independent
# implementation's; and claim C3's getppid() loop on 32-bit Arm with software
# PAN off and on, on QEMU's vexpress-a15 as published (about 48 minutes: 7 + 41).
qemu-reference: venv
	@$(PY) -m experiments qemu-reference mte-selftests kasan-boot hardening-selftests \
		--results-dir $(RESULTS_DIR)
	@$(PY) -m experiments qemu-arm32 --results-dir $(RESULTS_DIR)

figures: venv
	@$(PY) -m plots.all --results $(RESULTS_DIR) --out $(FIGURES_DIR) $(FIGURES)

# Maintainers: re-make the committed record (the experiments' CSVs in results/,
# the figures and tables in plots/out/, the tables in README and docs) from the
# cache, simulating what it lacks. Review with git diff before committing.
publish: venv
	@$(MAKE) --no-print-directory experiments figures \
		RESULTS_DIR=$(COMMITTED_RESULTS) FIGURES_DIR=$(COMMITTED_FIGURES)
	@$(PY) -m publish.verdicts --results $(COMMITTED_RESULTS) --out $(COMMITTED_FIGURES)
	@$(PY) -m publish.tables
