# cdnn -- top-level entry points.  CMake does the building; this file
# installs what a fresh Debian 12 machine lacks and names the common jobs.
#
#   make demo                 build, then run `cdnn demo`
#   make test                 build, then run every test (also under ASan+UBSan,
#                             the concurrency tests under TSan), then each fuzz
#                             target for 10 seconds
#   make fuzz SECONDS=N       build the libFuzzer targets (clang) and run each
#                             for N seconds (default 60) on its seed corpus
#   make install PREFIX=DIR   install headers, library, providers, CLI, pkg-config
#   make bench                CPU benchmarks against NumPy and PyTorch

PREFIX ?= /usr/local
BUILD ?= build
BUILD_SAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
BUILD_TSAN ?= build-tsan
SECONDS ?= 60
JOBS ?= $(shell nproc)

BUILD_DEPS = build-essential cmake pkg-config libssl-dev libopenblas-dev libjansson-dev
TEST_DEPS = libcmocka-dev python3-numpy python3-torch flatbuffers-compiler python3-flatbuffers \
            clang libclang-rt-14-dev
BENCH_DEPS = python3-numpy python3-torch

.PHONY: all deps build demo test test-asan test-tsan fuzz install bench clean

all: build

deps:
	@scripts/install-deps.sh $(BUILD_DEPS) $(TEST_DEPS)

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	      -DCMAKE_INSTALL_PREFIX=$(PREFIX)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/bin/cdnn demo

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) test-asan
	$(MAKE) test-tsan
	$(MAKE) fuzz SECONDS=10

# The whole suite again under AddressSanitizer and UndefinedBehaviorSanitizer,
# but for the tests labelled python or install (tests/CMakeLists.txt says
# why); those already ran above.
test-asan: deps
	cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=Debug -DCDNN_SANITIZE=ON
	cmake --build $(BUILD_SAN) -j $(JOBS)
	cd $(BUILD_SAN) && ASAN_OPTIONS=detect_leaks=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ctest --output-on-failure -j $(JOBS) -LE "python|install"

# The concurrency tests (label concurrency) under ThreadSanitizer.  OpenBLAS
# is not instrumented, so races reported from inside it are suppressed
# (tests/tsan.supp); cdnn's own code is not.
test-tsan: deps
	cmake -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCDNN_SANITIZE_THREAD=ON
	cmake --build $(BUILD_TSAN) -j $(JOBS) --target test_ops test_save_load \
	    test_benchmark test_memory cdnn_provider_cpu test_provider_counting \
	    test_provider_counting_v2 test_provider_planted
	cd $(BUILD_TSAN) && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	    ctest --output-on-failure -L concurrency

# libFuzzer targets for every loader (tests/fuzz), each run for SECONDS on
# a temporary copy of its seed corpus; findings and logs go to a directory
# under /tmp that the run names.  Needs clang (TEST_DEPS).
fuzz: deps
	cmake -S . -B $(BUILD_FUZZ) -DCMAKE_C_COMPILER=clang \
	      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCDNN_FUZZ=ON -DCDNN_BUILD_TESTS=OFF
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzzers
	tests/fuzz/run_fuzz.sh $(BUILD_FUZZ) $(SECONDS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

bench: build
	@scripts/install-deps.sh $(BENCH_DEPS)
	bench/cpu/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_TSAN) $(BUILD_FUZZ)
