# Thin wrapper over CMake presets. Quick start:  make demo   /   make test
PRESET ?= release
BUILD  := build/$(PRESET)
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps configure build demo test test-quick asan tsan bench install clean format

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)
	@ln -sf $(BUILD)/compile_commands.json compile_commands.json

# The main job on its embedded default cluster, then the same as one HTML
# page with charts (and GPT-3 175B planned on it, with its communication
# wall): report.html, whose path is the last line printed.
demo: build
	@$(BUILD)/tools/strata/strata
	@$(BUILD)/tools/strata/strata report --model gpt3-175b --html report.html >/dev/null
	@echo "$(CURDIR)/report.html"

# Every test (quick, slow, netns where possible).
test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

test-quick: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L quick

asan:
	@$(MAKE) --no-print-directory PRESET=asan-ubsan test

tsan:
	@$(MAKE) --no-print-directory PRESET=tsan test

bench: build
	@bash scripts/install-deps.sh --bench
	@cmake --build $(BUILD) --target vsmpi 2>/dev/null || echo "bench: no MPI baseline built (see bench/vs-mpi/CMakeLists.txt)"
	@bash bench/run.sh $(BUILD)

install: build
	@cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX),)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	@rm -rf build compile_commands.json
