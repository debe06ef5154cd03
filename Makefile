# Thin wrapper over CMake.  `make run` and `make test` are the quick start.
BUILD    ?= build
PREFIX   ?= /usr/local
CMAKE    ?= cmake
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
BENCH_ARGS ?=
LAB_ARGS ?=
REPORT_DIR ?= lab-report

.PHONY: all build run bench report test install clean asan tsan plots fuzz soak python

all: build

$(BUILD)/CMakeCache.txt:
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX)

build: $(BUILD)/CMakeCache.txt
	$(CMAKE) --build $(BUILD) -j $(JOBS)

# The main job: the three seed experiments, short (pinwheel-lab all).
run: build
	$(BUILD)/tools/pinwheel-lab all $(LAB_ARGS)

# The timer benchmark against libevent, libuv, libev, DPDK (pinwheel-bench).
bench: build
	$(BUILD)/bench/pinwheel-bench $(BENCH_ARGS)

# The lab's report: $(REPORT_DIR)/report.md and report.html (charts need gnuplot).
report: build
	$(BUILD)/tools/pinwheel-lab report --out $(REPORT_DIR) $(LAB_ARGS)

# The Python module (python/pinwheel: ctypes over libpinwheel.so; docs/link.md):
# nothing to compile; this checks that `PYTHONPATH=python python3 -c 'import
# pinwheel'` loads it from the repository root, where it finds build/libpinwheel.so
# (another BUILD: through PINWHEEL_LIBRARY).  Installed: make install, then
# python3 -m venv --system-site-packages V && V/bin/pip install --no-index --no-build-isolation ./python
PYTHON ?= python3
python: build
	$(if $(filter build,$(BUILD)),,PINWHEEL_LIBRARY=$(abspath $(BUILD))/libpinwheel.so) \
	  PYTHONPATH=python $(PYTHON) -B -c 'import pinwheel, pinwheel._lib as l; \
	  print("pinwheel", pinwheel.__version__, "from", pinwheel.__file__, "over", l.path)'

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# Charts for the README and docs/benchmarks.md: docs/img/*.svg (needs gnuplot).
# PLOT_CSV=file reuses results instead of running the benchmark again.
PLOT_CSV ?= $(BUILD)/bench.csv
PLOT_SCALING_CSV ?= $(BUILD)/scaling.csv
plots: build
	@if [ ! -s "$(PLOT_CSV)" ]; then $(BUILD)/bench/pinwheel-bench --csv > $(PLOT_CSV); fi
	@if [ ! -s "$(PLOT_SCALING_CSV)" ]; then $(BUILD)/bench/pinwheel-bench scaling --csv > $(PLOT_SCALING_CSV); fi
	bench/plots.sh $(PLOT_CSV) docs/img $(PLOT_SCALING_CSV)

install: build
	$(CMAKE) --install $(BUILD)

# Sanitizer builds (what .ci/run runs).
asan:
	$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_C_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
	$(CMAKE) --build build-asan -j $(JOBS)
	ctest --test-dir build-asan --output-on-failure -j $(JOBS)

# The TSan build's configuration, shared by tsan and soak.
TSAN_CONFIGURE = $(CMAKE) -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="-fsanitize=thread -O1"

tsan:
	$(TSAN_CONFIGURE)
	$(CMAKE) --build build-tsan -j $(JOBS)
	ctest --test-dir build-tsan --output-on-failure -L concurrent

# The soak (minutes): 1e8 timer operations against the reference models, then
# the real-thread stress under TSan, 16 threads, each migration policy.
SOAK_OPS ?= 100000000
SOAK_MS ?= 60000
soak: build
	$(TSAN_CONFIGURE)
	$(CMAKE) --build build-tsan -j $(JOBS) --target test_stress
	SOAK_OPS=$(SOAK_OPS) SOAK_MS=$(SOAK_MS) bash tests/soak.sh $(BUILD) build-tsan

# libFuzzer targets (clang), each run FUZZ_SECONDS over fuzz/corpus/NAME.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz:
	$(CMAKE) -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
	  -DPW_BUILD_FUZZ=ON -DPW_WERROR=OFF -DPW_BUILD_TESTS=OFF -DPW_BUILD_BENCH=OFF -DPW_BUILD_TOOLS=OFF \
	  -DCMAKE_C_FLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
	$(CMAKE) --build build-fuzz -j $(JOBS)
	bash fuzz/run.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
