# Thin targets over CMake presets; the README's two commands use `demo` and `test`.
BUILD_DIR ?= build
PRESET ?= release
JOBS ?= $(shell nproc)

.PHONY: deps configure build test bench demo deb docs-images clean

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

# The Debian package (docs/install.md): builds only what it holds, packs it with cpack and prints
# the .deb's path (BUILD_DIR/wattcut_VERSION_ARCH.deb).
deb: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target wattcut_package_files
	cd $(BUILD_DIR) && cpack -G DEB
	@deb=$$(sed -n 's/^set(CPACK_DEBIAN_FILE_NAME "\(.*\)")$$/\1/p' $(BUILD_DIR)/CPackConfig.cmake); \
	  test -f "$(BUILD_DIR)/$$deb" && echo "$(abspath $(BUILD_DIR))/$$deb"

# Every picture in docs/images, made again from the code by the commands the docs show
# (scripts/docs_images.py; ctest docs_images fails when a committed one is stale). The POLCA sweeps
# and the validation matrix take about an hour on 2 cores: SKIP_SLOW=1 leaves them as they are.
docs-images: build
	/usr/bin/python3 scripts/docs_images.py make --build $(BUILD_DIR) $(if $(SKIP_SLOW),--skip-slow)

clean:
	rm -rf $(BUILD_DIR)
