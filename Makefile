# Thin targets over CMake presets; the README's two commands use `demo` and `test`.
BUILD_DIR ?= build
PRESET ?= release
JOBS ?= $(shell nproc)

.PHONY: deps configure build test bench demo clean

deps:
	bash scripts/install-deps.sh

configure:
	cmake --preset $(PRESET) -B $(BUILD_DIR)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(BUILD_DIR)/bench/wattcut_bench --benchmark_min_time=0.2

# The main job on built-in defaults: the frontier of an 8-stage GPT-3 pipeline on a
# modelled A100, written to out/demo (replaced on every run). Builds only the CLI.
demo: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target wattcut
	$(BUILD_DIR)/src/wattcut/cli/wattcut frontier --gpu-model a100-sxm --out out/demo --overwrite

clean:
	rm -rf $(BUILD_DIR)
