# Build rules for the fakecuda CPU stand-in for libcuda (test infrastructure, never
# installed) and for the test kernels' PTX. Included by the top Makefile, which defines
# BUILD, CUDA_HOME, CUDA_INCLUDE and CC before including this file.

FAKECUDA_DIR := tests/fakecuda
FAKECUDA_LIB := $(BUILD)/fakecuda/libcuda.so.1
FAKECUDA_SRCS := $(addprefix $(FAKECUDA_DIR)/,core.c device.c trace.c kernels.c module.c memory.c stream.c graph.c procaddr.c queue.c)
FAKECUDA_OBJS := $(patsubst $(FAKECUDA_DIR)/%.c,$(BUILD)/fakecuda/%.o,$(FAKECUDA_SRCS))
FAKECUDA_HDRS := $(FAKECUDA_DIR)/fake.h tests/kernels/ag_kernels.h
FAKECUDA_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC \
	-D__CUDA_API_VERSION_INTERNAL -I$(CUDA_INCLUDE)
FAKECUDA_SELFTEST := $(BUILD)/fakecuda/selftest
KERNELS_PTX := $(BUILD)/kernels.ptx

$(BUILD)/fakecuda/%.o: $(FAKECUDA_DIR)/%.c $(FAKECUDA_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(FAKECUDA_CFLAGS) -c $< -o $@

# -Bsymbolic-functions: the cuGetProcAddress table must hand out this library's own
# functions even when an LD_PRELOAD interposer defines the same cu* names.
$(FAKECUDA_LIB): $(FAKECUDA_OBJS) $(FAKECUDA_DIR)/exports.map
	$(CC) -shared -Wl,-Bsymbolic-functions -Wl,-soname,libcuda.so.1 -Wl,--version-script=$(FAKECUDA_DIR)/exports.map \
		-Wl,--no-undefined -o $@ $(FAKECUDA_OBJS) -lpthread
	ln -sf libcuda.so.1 $(BUILD)/fakecuda/libcuda.so

$(KERNELS_PTX): tests/kernels/kernels.cu tests/kernels/ag_kernels.h
	@mkdir -p $(dir $@)
	$(CUDA_HOME)/bin/nvcc -ptx -arch=compute_90 tests/kernels/kernels.cu -o $@

$(FAKECUDA_SELFTEST): $(FAKECUDA_DIR)/selftest.c tests/kernels/ag_kernels.h $(FAKECUDA_LIB)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -I$(CUDA_INCLUDE) $< -o $@ \
		-L$(BUILD)/fakecuda -Wl,-rpath,$(abspath $(BUILD)/fakecuda) -lcuda -lpthread

# Runs the self-test in both execution modes, then checks that every exported symbol is a real libcuda symbol
# (the toolkit's stub libcuda lists them) so the stand-in never invents names.
.PHONY: fakecuda-selftest
fakecuda-selftest: $(FAKECUDA_SELFTEST) $(KERNELS_PTX)
	$(FAKECUDA_SELFTEST) $(KERNELS_PTX)
	AG_FAKE_ASYNC=1 $(FAKECUDA_SELFTEST) $(KERNELS_PTX)
	@nm -D --defined-only $(FAKECUDA_LIB) | awk '{print $$3}' | sort > $(BUILD)/fakecuda/exports.txt
	@nm -D --defined-only $(CUDA_HOME)/lib64/stubs/libcuda.so | awk '{print $$3}' | sort > $(BUILD)/fakecuda/stub-exports.txt
	@extra=$$(comm -23 $(BUILD)/fakecuda/exports.txt $(BUILD)/fakecuda/stub-exports.txt); \
	if [ -n "$$extra" ]; then echo "fakecuda exports symbols libcuda does not have: $$extra"; exit 1; fi; \
	echo "fakecuda exports: $$(wc -l < $(BUILD)/fakecuda/exports.txt) symbols, all real libcuda names"
