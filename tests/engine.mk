# Engine tests: the scenario program (tests/progs/eng_loop.c) and the differential
# fuzzer (tests/fuzz/fuzz.c), run by tests/engine_*.bats. Included by the top Makefile,
# which defines BUILD, CUDA_HOME, CUDA_INCLUDE and CC (the programs use cuda.h's default
# versioned names, not -D__CUDA_API_VERSION_INTERNAL); KERNELS_PTX, FAKECUDA_LIB
# and LIB are only used in recipes.
#
#   make fuzz-long [FUZZ_SEEDS=5000] [FUZZ_FIRST=1]   many more fuzz seeds than make test

ENGINE_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -I$(CUDA_INCLUDE)
ENGINE_LDLIBS := -L$(CUDA_HOME)/lib64/stubs -lcuda -lpthread
ENGINE_TEST_BINS := $(BUILD)/progs/eng_loop $(BUILD)/progs/holes $(BUILD)/progs/no_threads.so \
	$(BUILD)/progs/adversary $(BUILD)/fuzz/fuzz

$(BUILD)/progs/eng_loop: tests/progs/eng_loop.c tests/progs/check.h
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -o $@ $< $(ENGINE_LDLIBS)

# The programs of tests/holes.bats (issue 8), and a shim that makes pthread_create fail.
$(BUILD)/progs/holes: tests/progs/holes.c tests/progs/check.h
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -o $@ $< $(ENGINE_LDLIBS)

$(BUILD)/progs/no_threads.so: tests/progs/no_threads.c
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -shared -fPIC -o $@ $<

# The patterns of issue 8 (tests/adversary.bats; scripts/gpu/adversary.sh builds the
# same source against the real libcuda).
$(BUILD)/progs/adversary: tests/progs/adversary.c tests/progs/check.h
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -o $@ $< $(ENGINE_LDLIBS)

$(BUILD)/fuzz/fuzz: tests/fuzz/fuzz.c tests/kernels/ag_kernels.h tests/progs/check.h
	@mkdir -p $(@D)
	$(CC) $(ENGINE_CFLAGS) -o $@ $< $(ENGINE_LDLIBS)

FUZZ_SEEDS ?= 5000
FUZZ_FIRST ?= 1
FUZZ_JOBS  ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: fuzz-long
fuzz-long: $(ENGINE_TEST_BINS) $(LIB) fakecuda-selftest
	AG_BUILD=$(abspath $(BUILD)) AG_KERNELS_PTX=$(abspath $(KERNELS_PTX)) \
	AG_FAKECUDA_LIB=$(abspath $(FAKECUDA_LIB)) \
		tests/fuzz/run-seeds $(FUZZ_FIRST) $(FUZZ_SEEDS) $(FUZZ_JOBS)

# make test runs the engine's bats files too: they need these programs.
test-bats test-async test-progs: $(ENGINE_TEST_BINS)
