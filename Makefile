# berth: `make test` is what CI runs (under 25 minutes on a 2-core machine);
# `make verify` reruns every checker.
#
# Each cfg gets its own target dir, so switching between them never rebuilds the others.
# Mutants and parkers are selected by environment variables that core/build.rs turns into cfgs
# (BERTH_MUTANT, BERTH_PARKER), so RUSTFLAGS stay identical and only `berth` recompiles.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
NIGHTLY ?= +nightly

LOOM_TARGET := target/loom
LOOM_MAX_PREEMPTIONS ?= 3
LOOM_ENV := RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=$(LOOM_TARGET) LOOM_MAX_PREEMPTIONS=$(LOOM_MAX_PREEMPTIONS)

.PHONY: all test verify setup unsafe-inventory fmt-check clippy doc unit examples api-check api-snapshot doc-examples msrv loom loom-futex loom-condvar shuttle mutants teach kill-matrix miri tsan fuzz bench report-allocator report-scq-threshold help

all: test

help:
	@echo "make test    fmt check, clippy -D warnings, cargo test, loom models (both parkers), mutant gate"
	@echo "make verify  setup, then every checker with a summary table (VERIFY_BUDGET=default|long)"
	@echo "make setup   nightly miri + rust-src, cargo-fuzz (idempotent)"
	@echo "make loom | shuttle | mutants | miri | tsan | fuzz | bench"
	@echo "make kill-matrix  every mutant x every checker (reports/kill-matrix/)"
	@echo "make teach MUTANT=name  run the check that catches one mutant; print its timeline"
	@echo "make examples  run core/examples/* (each checks its own result)"
	@echo "make api-check | api-snapshot  public API vs core/api/public-api.txt | rewrite it"
	@echo "make doc-examples  every public item has an \`# Examples\` doctest"
	@echo "make msrv    the library builds with Cargo.toml's rust-version"
	@echo "make report-allocator  malloc vs pool futex report (reports/allocator/README.md)"
	@echo "make report-scq-threshold  does ScqQueue strand a value? mutant vs fix (reports/scq-threshold/README.md)"

## test: what CI runs.
test: fmt-check unsafe-inventory clippy doc api-check doc-examples unit examples loom shuttle mutants
	@echo "make test: all passed"

## verify: every checker in turn (scripts/verify.py: progress, then a summary table of checker,
## result, count and time; non-zero exit if anything failed). VERIFY_BUDGET=default fits in
## about an hour on the 2-core machine; VERIFY_BUDGET=long runs the nightly-sized budgets.
VERIFY_BUDGET ?= default
verify: setup
	VERIFY_BUDGET=$(VERIFY_BUDGET) python3 scripts/verify.py

## setup: idempotent; rustup and cargo install skip what is already there.
setup:
	rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
	rustup toolchain list | grep -q '^$(MSRV)' || rustup toolchain install $(MSRV) --profile minimal
	rustup component add miri rust-src --toolchain nightly
	command -v cargo-fuzz >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked

## unsafe-inventory: every unsafe site in core/src has its row in core/UNSAFE.md.
unsafe-inventory:
	python3 scripts/check_unsafe_inventory.py

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p berth --all-targets --features futures -- -D warnings
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom $(CARGO) clippy -p berth-models --tests -- -D warnings
	RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=target/shuttle $(CARGO) clippy -p berth-models --tests -- -D warnings

## doc: the API docs build with no warning (broken or private intra-doc links fail).
doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p berth --no-deps --features futures

## examples: each program in core/examples/ (dev profile), each asserting its own result.
EXAMPLES := $(sort $(basename $(notdir $(wildcard core/examples/*.rs))))
examples:
	$(CARGO) build -q -p berth --examples
	for e in $(EXAMPLES); do \
		echo "example: $$e"; \
		$(CARGO) run -q -p berth --example $$e || exit 1; \
	done

## api-check: the public API, listed from rustdoc's JSON (nightly, own target dir), matches
## core/api/public-api.txt; a mismatch prints the diff. api-snapshot rewrites the file after an
## intended change (note it in CHANGELOG.md).
api-check:
	CARGO="$(CARGO)" NIGHTLY="$(NIGHTLY)" python3 scripts/api_snapshot.py

api-snapshot:
	CARGO="$(CARGO)" NIGHTLY="$(NIGHTLY)" python3 scripts/api_snapshot.py --bless

## doc-examples: every public item (as api-check lists them) has an `# Examples` section with a
## doctest; the doctests themselves run in `unit` (the futures-only ones with the feature on).
doc-examples:
	CARGO="$(CARGO)" NIGHTLY="$(NIGHTLY)" python3 scripts/check_doc_examples.py

## msrv: the library (both feature sets) checks with the toolchain of Cargo.toml's rust-version.
## Only the library: the tests' dev-dependencies need a newer Rust (proptest 1.12 needs 1.88).
MSRV := $(shell sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
msrv:
	CARGO_TARGET_DIR=target/msrv $(CARGO) +$(MSRV) check -q -p berth
	CARGO_TARGET_DIR=target/msrv $(CARGO) +$(MSRV) check -q -p berth --features futures
	@echo "make msrv: berth builds with Rust $(MSRV)"

unit:
	$(CARGO) test --workspace
	$(CARGO) test -p berth --features futures --test channel_stream
	$(CARGO) test -p berth --features futures --doc -- channel::stream::

## loom: the models in models/tests/loom_*.rs, release build, under both parkers.
loom: loom-futex loom-condvar

loom-futex:
	$(LOOM_ENV) BERTH_PARKER=futex $(CARGO) test -p berth-models --release

loom-condvar:
	$(LOOM_ENV) BERTH_PARKER=condvar $(CARGO) test -p berth-models --release

## shuttle: the shuttle models (random + PCT schedulers), SHUTTLE_ITERATIONS schedules each.
SHUTTLE_ITERATIONS ?= 200
SHUTTLE_TEST ?=
shuttle:
	RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=target/shuttle SHUTTLE_ITERATIONS=$(SHUTTLE_ITERATIONS) \
		$(CARGO) test -p berth-models --release -- $(SHUTTLE_TEST)

## kill-matrix: every mutant against every checker (loom, shuttle, Miri, TSan, stress, proptest,
## fuzz) into reports/kill-matrix/ (README.md table, results.json). Hours on the 2-core machine;
## runs only the cells missing from results.json (KILL_MATRIX_ARGS=--fresh for all of them).
KILL_MATRIX_ARGS ?=
kill-matrix:
	python3 mutants/kill_matrix.py $(KILL_MATRIX_ARGS)

## mutants: every mutant in mutants/manifest.toml must be caught with its expected message.
mutants:
	python3 mutants/run.py

## teach: one mutant, its catching check, the model's timeline of the failing execution and the
## checker's raw output (mutants/teach.py; mutants/README.md walks through each mutant).
MUTANT ?=
teach:
	@test -n "$(MUTANT)" || { echo "usage: make teach MUTANT=name (names: mutants/manifest.toml)"; exit 2; }
	python3 mutants/teach.py $(MUTANT)

## miri: the Miri matrix of miri/matrix.toml (aliasing models x parkers x seeds), the rows of
## MIRI_BUDGET (default | long); miri/README.md lists the rows, the skips and their reasons.
MIRI_BUDGET ?= default
miri:
	MIRI_BUDGET=$(MIRI_BUDGET) CARGO="$(CARGO)" NIGHTLY="$(NIGHTLY)" python3 miri/run.py

## tsan: the concurrent suites under ThreadSanitizer (nightly, std rebuilt with the sanitizer).
## A gate: halt_on_error makes any report fail the run. No suppressions are needed today.
TSAN_TARGET ?= x86_64-unknown-linux-gnu
tsan:
	RUSTFLAGS="-Zsanitizer=thread" CARGO_TARGET_DIR=target/tsan TSAN_OPTIONS="halt_on_error=1" \
		$(CARGO) $(NIGHTLY) test -Zbuild-std --target $(TSAN_TARGET) -p berth \
		--test queue_suite --test channel_suite --test spsc_suite --test scq_threshold \
		--test deque_suite --test pool_suite --test channel_async --test channel_select --test channel_mpsc

## fuzz: each cargo-fuzz target in fuzz/fuzz_targets/ for FUZZ_SECS seconds (nightly; see
## fuzz/README.md). fuzz/ is its own workspace, so `make test` never builds it. An input that
## runs FUZZ_TIMEOUT seconds is reported as a crash: the targets never wait without bound, so
## that is a blocking call that hung (libFuzzer's default would wait 20 minutes).
FUZZ_SECS ?= 30
FUZZ_TIMEOUT ?= 10
FUZZ_TARGETS ?= $(sort $(basename $(notdir $(wildcard fuzz/fuzz_targets/*.rs))))
fuzz:
	cd fuzz && for t in $(FUZZ_TARGETS); do \
		echo "fuzz: $$t for $(FUZZ_SECS) s"; \
		$(CARGO) $(NIGHTLY) fuzz run $$t -- -max_total_time=$(FUZZ_SECS) -timeout=$(FUZZ_TIMEOUT) || exit 1; \
	done

## bench: every benchmark of reports/bench (berth beside crossbeam, flume, kanal, std, tokio,
## async-channel, rayon; wake latency and CPU while waiting), then reports/bench/report.py
## writes $(BENCH_OUT): results.json (every sample, commit, source hashes, machine, load before
## and after, the command), RESULTS.md (medians, ratios, losses) and SVG plots.
## BENCH_BUDGET=quick: a few minutes; smoke: seconds, with a filter, e.g.
## make bench BENCH_BUDGET=smoke BENCH_ARGS='-- p1c1_cap16' BENCH_OUT=/tmp/bench-smoke
BENCH_BUDGET ?=
BENCH_ARGS ?=
BENCH_OUT ?= reports/benchmarks
BENCH_CMD = BENCH_BUDGET=$(BENCH_BUDGET) $(CARGO) bench -p berth-bench $(BENCH_ARGS)
bench: export BERTH_BENCH_COMMAND = $(BENCH_CMD)
bench:
	python3 reports/bench/report.py before
	$(BENCH_CMD)
	python3 reports/bench/report.py after --out $(BENCH_OUT)

## report-allocator: futex calls and context switches of malloc'd vs pooled berth::spsc nodes
## (reports/allocator/README.md); about 2-3 minutes on the 2-core machine. Builds its own crate
## (own [workspace], not part of `cargo test --workspace`) into target/allocator.
report-allocator:
	python3 reports/allocator/run.py

## report-scq-threshold: the SCQ threshold hole, mutant scq_weak_threshold vs the fix
## (reports/scq-threshold/README.md): 3P3C and 1P7C on real threads, and the shuttle lockstep
## models, SCQ_REPORT_RUNS runs each (default 60), every run a child process under a watchdog;
## about 6-8 minutes on the 2-core machine. Builds its own crate (own [workspace], not part of
## `cargo test --workspace`) into target/scq-threshold and target/scq-threshold-mutant, and the
## shuttle models into target/shuttle.
report-scq-threshold:
	python3 reports/scq-threshold/run.py
