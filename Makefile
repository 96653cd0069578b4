# The front door: `make demo` runs cadre on a local control plane,
# `make test` runs every test. CMake does the real build in build/.

BUILD       ?= build
ASAN_BUILD  ?= build-asan
CLANG_BUILD ?= build-clang
FUZZ_BUILD  ?= build-fuzz
# Seconds each fuzz target runs in `make fuzz`; `make test` runs FUZZ_QUICK_SECONDS.
FUZZ_SECONDS ?= 60
FUZZ_QUICK_SECONDS ?= 4
JOBS        ?= $(shell nproc)
export PATH := /usr/local/go/bin:$(PATH)

.PHONY: release chaos all deps build unit asan valgrind valgrind-controller clang fuzz fuzz-build fuzz-quick health-checks e2e test demo demo-down bench bench-quick bench-cache clean

all: build

deps:
	@scripts/deps

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

# Both unit runners (CMakeLists.txt says why two) at once, one synthesis line for them.
UNIT_RUNNERS = cadre-unit cadre-unit-cli

unit: build
	scripts/unit-runners $(addprefix $(BUILD)/,$(UNIT_RUNNERS))

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCADRE_SANITIZE=ON >/dev/null

# The unit tests again under AddressSanitizer and UndefinedBehaviorSanitizer, in two
# runner processes per core (scripts/unit-shards says why not Criterion's --jobs).
asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		scripts/unit-shards $(addprefix $(ASAN_BUILD)/,$(UNIT_RUNNERS))

# The unit tests under valgrind; any leak or error fails the run
# (VALGRIND_SUITES="a b" for some suites only: scripts/valgrind-unit).
valgrind: build
	scripts/valgrind-unit $(addprefix $(BUILD)/,$(UNIT_RUNNERS))

# The controller under valgrind through a minute of real work on the local
# control plane (also run by e2e/tests/30-runtime.bats).
valgrind-controller: build
	scripts/valgrind-controller $(BUILD)/cadre-controller

$(CLANG_BUILD)/CMakeCache.txt:
	CC=clang cmake -S . -B $(CLANG_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

# The second compiler: everything built with clang under the same -Werror, and
# the unit tests run once more on that build.
clang: deps $(CLANG_BUILD)/CMakeCache.txt
	cmake --build $(CLANG_BUILD) -j$(JOBS)
	scripts/unit-runners $(addprefix $(CLANG_BUILD)/,$(UNIT_RUNNERS))

$(FUZZ_BUILD)/CMakeCache.txt:
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCADRE_FUZZ=ON \
		-DCADRE_TESTS=OFF >/dev/null

fuzz-build: deps $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzz-targets

# Every libFuzzer target of fuzz/ for FUZZ_SECONDS each, under ASan and UBSan
# (docs/fuzzing.md); an input that breaks one lands in fuzz/regressions/.
fuzz: fuzz-build
	scripts/fuzz $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The same for a few seconds each, from a fixed random seed: part of make test.
fuzz-quick: fuzz-build
	FUZZ_SEED=1 scripts/fuzz $(FUZZ_BUILD) $(FUZZ_QUICK_SECONDS)

# The Argo CD health checks (manifests/argocd) on objects in every phase, with lua5.1.
health-checks: deps
	e2e/health/test-argocd

e2e: build
	e2e/run

# The Dockerfile's Release build (its exact cmake line: -O3 finds warnings the
# RelWithDebInfo builds do not), with gcc and with clang, as the image ships them.
RELEASE_BUILD ?= build-release
release: deps
	cmake -S . -B $(RELEASE_BUILD)-gcc -DCMAKE_BUILD_TYPE=Release -DCADRE_TESTS=OFF >/dev/null
	cmake --build $(RELEASE_BUILD)-gcc -j$(JOBS) --target cadre-controller cadre
	CC=clang cmake -S . -B $(RELEASE_BUILD)-clang -DCMAKE_BUILD_TYPE=Release -DCADRE_TESTS=OFF >/dev/null
	cmake --build $(RELEASE_BUILD)-clang -j$(JOBS) --target cadre-controller cadre

# Each in turn, with the time each took (scripts/make-test).
test:
	MAKE="$(MAKE)" scripts/make-test unit asan valgrind clang release fuzz-quick health-checks e2e bench-quick

# The faults on the wire (e2e/tests/90-faults.bats, docs/e2e.md) repeated CHAOS_REPS times
# each, for a night; make test runs them once.
CHAOS_REPS ?= 10
chaos: build
	CADRE_CHAOS_REPS=$(CHAOS_REPS) e2e/run 90-faults

# KUEUE=1 runs Kueue too; REAL=1 a real node (root), where the seed's train.sh trains
# for real (scripts/demo says what each shows).
demo: build
	KUEUE=$(KUEUE) REAL=$(REAL) scripts/demo

demo-down:
	scripts/demo-down

# The benchmark suite (docs/benchmarks.md): the full run writes bench/results/ (about
# 25-30 minutes, docs/benchmarks.md); the quick one small sizes into a scratch dir, to show every number is
# produced (a few minutes, part of make test).
bench: build
	bench/run

bench-quick: build
	bench/run --quick

# The caches' memory per object, without a cluster (docs/design.md 8).
bench-cache: build
	$(BUILD)/cadre-bench-cache unit/testdata/golden/llama-pretrain.pod-1.json \
		unit/testdata/golden/inputs/llama-pretrain.json

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(CLANG_BUILD) $(FUZZ_BUILD) $(RELEASE_BUILD)-gcc $(RELEASE_BUILD)-clang
