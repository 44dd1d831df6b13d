# Test programs, unit tests and the test run; included by the top Makefile after LIB,
# BUILD, CUDA_HOME and CC are defined. FAKECUDA_LIB and KERNELS_PTX come from
# tests/fakecuda/fakecuda.mk, included after this file, so they are used here only in
# recipes (expanded late) and reached as prerequisites through fakecuda-selftest.
#
#   make test        unit tests, the fakecuda self-test, then every tests/*.bats
#   make test-unit   only the unit tests
#   make test-bats   only the bats tests (BATS_FLAGS="-f pattern" to pick some)
#   make test-async  the order-dependent bats files on the asynchronous stand-in

TEST_PROGS_DIR := $(BUILD)/progs
TEST_UNIT_DIR  := $(BUILD)/unit
BATS           ?= bats
BATS_LIB_PATH  ?= /usr/lib/bats
BATS_FLAGS     ?=

# Test programs: plain C against the driver API, no -D_GNU_SOURCE (the sources that
# need it define it), every variant of cuda.h declared under its real symbol name.
TEST_PROG_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D__CUDA_API_VERSION_INTERNAL \
	-I$(CUDA_HOME)/include
TEST_PROG_DEPS := tests/progs/workload.c tests/progs/drv.h tests/kernels/ag_kernels.h
TEST_PROGS := $(addprefix $(TEST_PROGS_DIR)/,drv_procaddr drv_dlsym drv_link)

$(TEST_PROGS_DIR)/drv_procaddr: tests/progs/door_procaddr.c $(TEST_PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) -o $@ tests/progs/workload.c $< -ldl -lpthread

$(TEST_PROGS_DIR)/drv_dlsym: tests/progs/door_dlsym.c $(TEST_PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) -o $@ tests/progs/workload.c $< -ldl -lpthread

# Linked against the toolkit's stub; at run time libcuda.so.1 comes from the loader's
# search path (LD_LIBRARY_PATH=build/fakecuda in the tests), so no rpath.
$(TEST_PROGS_DIR)/drv_link: tests/progs/door_link.c $(TEST_PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) -o $@ tests/progs/workload.c $< \
		-L$(CUDA_HOME)/lib64/stubs -lcuda -lpthread

# Unit tests: each tests/unit/test_X.c is linked with the library sources it tests.
# $(LIB) first, so that the generated headers in $(BUILD)/gen exist.
TEST_UNIT_CFLAGS := -std=c11 -O0 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-D__CUDA_API_VERSION_INTERNAL -Isrc -I$(BUILD)/gen -I$(CUDA_HOME)/include
TEST_UNITS := $(TEST_UNIT_DIR)/test_config

$(TEST_UNIT_DIR)/test_config: tests/unit/test_config.c tests/unit/unit.h src/config.c src/log.c \
		src/config.h src/log.h src/options.def $(LIB)
	@mkdir -p $(@D)
	$(CC) $(TEST_UNIT_CFLAGS) -o $@ $< src/config.c src/log.c

.PHONY: test test-unit test-bats test-progs
test-progs: $(TEST_PROGS)

test-unit: $(TEST_UNITS)
	@for t in $(TEST_UNITS); do echo "$$t"; $$t || exit 1; done

test-bats: $(LIB) $(TEST_PROGS) fakecuda-selftest
	AG_BUILD=$(abspath $(BUILD)) AG_KERNELS_PTX=$(abspath $(KERNELS_PTX)) \
	AG_FAKECUDA_LIB=$(abspath $(FAKECUDA_LIB)) BATS_LIB_PATH=$(BATS_LIB_PATH) \
		$(BATS) $(BATS_FLAGS) tests/

# The bats files whose outcome depends on execution order, once more with the stand-in
# executing asynchronously (AG_FAKE_ASYNC=1: a worker thread per stream, so reordered
# work computes wrong results instead of only showing in the trace).
ASYNC_BATS := tests/engine_scenarios.bats tests/engine_fuzz.bats tests/threads.bats tests/exit.bats \
	tests/adversary.bats

.PHONY: test-async
test-async: $(LIB) $(TEST_PROGS) fakecuda-selftest
	AG_FAKE_ASYNC=1 AG_BUILD=$(abspath $(BUILD)) AG_KERNELS_PTX=$(abspath $(KERNELS_PTX)) \
	AG_FAKECUDA_LIB=$(abspath $(FAKECUDA_LIB)) BATS_LIB_PATH=$(BATS_LIB_PATH) \
		$(BATS) $(BATS_FLAGS) $(ASYNC_BATS)

test: test-unit test-bats test-async
