# libautograph: `make` builds build/libautograph.so and the launcher,
# `make test` runs every test on the CPU stand-in for libcuda,
# `make demo` runs the tiny-kernel program eager, under autograph and graphed.

CUDA_HOME ?= /usr/local/cuda
# Headers (cuda.h, cudaProfiler.h, nvtx3/) may come from another CUDA version than the
# toolkit, e.g. a 12.x set fetched by scripts/cuda-headers; nvcc and the stub libcuda
# always come from CUDA_HOME.
CUDA_INCLUDE ?= $(CUDA_HOME)/include
NVCC      ?= $(CUDA_HOME)/bin/nvcc
PYTHON    ?= python3
BUILD     ?= build
PREFIX    ?= /usr/local
LIBDIR    ?= lib
STRIP     ?= strip
VERSION   := 0.1.0

LIB_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -fvisibility=hidden \
	-D_GNU_SOURCE -D__CUDA_API_VERSION_INTERNAL -DAG_VERSION=\"$(VERSION)\" \
	-I$(CUDA_INCLUDE) -Isrc -I$(BUILD)/gen
LIB_LDFLAGS := -shared -Wl,--version-script=src/libautograph.map -Wl,-z,defs \
	-Wl,-z,noexecstack -ldl -lpthread

LIB_SRC := $(wildcard src/*.c src/driver/*.c src/hook/*.c src/engine/*.c src/process/*.c)
LIB_ASM := $(wildcard src/hook/*.S)
LIB_OBJ := $(patsubst src/%,$(BUILD)/obj/%,$(LIB_SRC:.c=.o) $(LIB_ASM:.S=.o)) $(BUILD)/obj/g_hook.o \
	$(BUILD)/obj/g_names.o
LIB     := $(BUILD)/libautograph.so
GEN     := $(BUILD)/gen/g_hook.h $(BUILD)/gen/g_hook.c $(BUILD)/gen/g_real.h $(BUILD)/gen/g_names.c

# Plain `make`: the library and the launcher ($(LAUNCHER) is defined by launcher.mk,
# included below, so the name is used here and not the variable).
.PHONY: all lib test demo install uninstall clean docs-check
all: lib launcher analyzer

lib: $(LIB) $(BUILD)/COMMIT

# The commit the build came from, for what runs it where the tree may carry no .git of its own
# (scripts/gpu-check.sh and scripts/bench on the device machine); rewritten only when it changes.
$(BUILD)/COMMIT: FORCE
	@mkdir -p $(@D)
	@echo '$(AG_COMMIT)' | cmp -s - $@ || echo '$(AG_COMMIT)' > $@

$(LIB): $(LIB_OBJ) src/libautograph.map
	$(CC) -o $@ $(LIB_OBJ) $(LIB_LDFLAGS)

# The generated wrappers follow the headers in CUDA_INCLUDE: cuda.h through the
# preprocessor with every variant declared, then the policy table.
$(BUILD)/gen/cuda_pp.i: $(CUDA_INCLUDE)/cuda.h $(CUDA_INCLUDE)/cudaProfiler.h
	@mkdir -p $(@D)
	printf '#include <cuda.h>\n#include <cudaProfiler.h>\n' | \
		$(CC) -E -P -D__CUDA_API_VERSION_INTERNAL -I$(CUDA_INCLUDE) -x c - -o $@

$(GEN) &: $(BUILD)/gen/cuda_pp.i src/hook/gen_wrappers.py src/hook/classes.txt
	$(PYTHON) src/hook/gen_wrappers.py $< src/hook/classes.txt $(BUILD)/gen

$(BUILD)/obj/%.o: src/%.c $(GEN)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: src/%.S
	@mkdir -p $(@D)
	$(CC) -Isrc -MMD -MP -c $< -o $@

# The generated sources include the engine's headers: -MMD, so that a change there rebuilds them.
$(BUILD)/obj/g_hook.o: $(BUILD)/gen/g_hook.c $(GEN)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -Wno-unused-parameter -MMD -MP -c $< -o $@

$(BUILD)/obj/g_names.o: $(BUILD)/gen/g_names.c $(GEN)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

-include $(wildcard $(BUILD)/obj/*.d $(BUILD)/obj/*/*.d)

include tests/tests.mk
include tests/engine.mk
include src/launcher/launcher.mk
include src/analyze/analyze.mk
-include tests/fakecuda/fakecuda.mk
-include apps/apps.mk

.PHONY: launcher analyzer
launcher: $(LAUNCHER)
analyzer: $(ANALYZER)

# PREFIX, LIBDIR (lib/x86_64-linux-gnu on Debian) and DESTDIR (staged installs) as in
# the GNU conventions. Installed copies are stripped; build/ keeps the debug info.
install: $(LIB) install-launcher install-analyzer
	install -d $(DESTDIR)$(PREFIX)/$(LIBDIR)
	install -m 0644 $(LIB) $(DESTDIR)$(PREFIX)/$(LIBDIR)/libautograph.so
	$(STRIP) --strip-unneeded $(DESTDIR)$(PREFIX)/$(LIBDIR)/libautograph.so

uninstall: uninstall-launcher uninstall-analyzer
	rm -f $(DESTDIR)$(PREFIX)/$(LIBDIR)/libautograph.so

# The main job: the tiny-kernel program eager, under autograph and hand-graphed on a
# GPU; without one, the same story on the CPU stand-in (what is graphed, no timings).
DEMO_DEPS := $(LIB) $(LAUNCHER) $(if $(shell nvidia-smi -L 2>/dev/null | grep '^GPU'),\
	$(BUILD)/apps/static/tiny_kernels,$(FAKECUDA_LIB) $(KERNELS_PTX) $(BUILD)/progs/drv_link)
demo: $(DEMO_DEPS)
	bash scripts/demo.sh

docs-check:
	$(PYTHON) scripts/gen-options-doc --check README.md docs/autograph.1

clean:
	rm -rf $(BUILD)
