# cdnn -- top-level entry points.  CMake does the building; this file
# installs what a fresh Debian 12 machine lacks and names the common jobs.
#
#   make demo                 build, then run `cdnn demo`
#   make test                 build, then run every test (also under ASan+UBSan)
#   make install PREFIX=DIR   install headers, library, providers, CLI, pkg-config
#   make bench                CPU benchmarks against NumPy and PyTorch

PREFIX ?= /usr/local
BUILD ?= build
BUILD_SAN ?= build-asan
JOBS ?= $(shell nproc)

BUILD_DEPS = build-essential cmake pkg-config libssl-dev libopenblas-dev libjansson-dev
TEST_DEPS = libcmocka-dev python3-numpy flatbuffers-compiler python3-flatbuffers
BENCH_DEPS = python3-numpy python3-torch

.PHONY: all deps build demo test test-asan install bench clean

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

# The whole suite again under AddressSanitizer and UndefinedBehaviorSanitizer,
# but for the tests labelled python or install (tests/CMakeLists.txt says
# why); those already ran above.
test-asan: deps
	cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=Debug -DCDNN_SANITIZE=ON
	cmake --build $(BUILD_SAN) -j $(JOBS)
	cd $(BUILD_SAN) && ASAN_OPTIONS=detect_leaks=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ctest --output-on-failure -j $(JOBS) -LE "python|install"

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

bench: build
	@scripts/install-deps.sh $(BENCH_DEPS)
	bench/cpu/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD_SAN)
