# Test programs, unit tests and the test run; included by the top Makefile after LIB,
# BUILD, CUDA_HOME, CUDA_INCLUDE and CC are defined. FAKECUDA_LIB and KERNELS_PTX come from
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
	-I$(CUDA_INCLUDE)
TEST_PROG_DEPS := tests/progs/workload.c tests/progs/drv.h tests/kernels/ag_kernels.h
TEST_PROGS := $(addprefix $(TEST_PROGS_DIR)/,drv_procaddr drv_dlsym drv_link sig_end unload)

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

# Several devices from one process (tests/multidev.bats); plain cuda.h names, like the
# engine's programs.
$(TEST_PROGS_DIR)/multidev: tests/progs/multidev.c tests/progs/check.h
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -I$(CUDA_INCLUDE) -o $@ $< \
		-L$(CUDA_HOME)/lib64/stubs -lcuda -lpthread
test-bats: $(TEST_PROGS_DIR)/multidev

$(TEST_PROGS_DIR)/unload: tests/progs/unload.c
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) -o $@ $< -ldl

$(TEST_PROGS_DIR)/sig_end: tests/progs/sig_end.c
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda

# Unit tests: each tests/unit/test_X.c is linked with the library sources it tests.
# $(LIB) first, so that the generated headers in $(BUILD)/gen exist.
TEST_UNIT_CFLAGS := -std=c11 -O0 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-D__CUDA_API_VERSION_INTERNAL -Isrc -I$(BUILD)/gen -I$(CUDA_INCLUDE)
TEST_UNITS := $(addprefix $(TEST_UNIT_DIR)/,test_config test_pathfmt test_names test_names_cxx \
	test_op test_history test_detect test_kernels test_facts test_policy test_stats)
CONFIG_SRC := src/config.c src/log.c src/pathfmt.c src/names.c

$(TEST_UNIT_DIR)/test_config: tests/unit/test_config.c tests/unit/unit.h $(CONFIG_SRC) \
		src/config.h src/log.h src/pathfmt.h src/names.h src/options.def $(LIB)
	@mkdir -p $(@D)
	$(CC) $(TEST_UNIT_CFLAGS) -o $@ $< $(CONFIG_SRC)

$(TEST_UNIT_DIR)/test_pathfmt: tests/unit/test_pathfmt.c tests/unit/unit.h src/pathfmt.c src/pathfmt.h
	@mkdir -p $(@D)
	$(CC) $(TEST_UNIT_CFLAGS) -o $@ $< src/pathfmt.c

$(TEST_UNIT_DIR)/test_stats: tests/unit/test_stats.c tests/unit/unit.h src/stats.c src/stats.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(TEST_UNIT_CFLAGS) -Itests/unit -o $@ $< src/stats.c -lpthread

# The same test without and with libstdc++ in the process: both ways of reading names.
$(TEST_UNIT_DIR)/test_names: tests/unit/test_names.c tests/unit/unit.h src/names.c src/names.h
	@mkdir -p $(@D)
	$(CC) $(TEST_UNIT_CFLAGS) -o $@ $< src/names.c -ldl

$(TEST_UNIT_DIR)/test_names_cxx: tests/unit/test_names.c tests/unit/unit.h src/names.c src/names.h
	@mkdir -p $(@D)
	$(CC) $(TEST_UNIT_CFLAGS) -DEXPECT_LIBSTDCXX -o $@ $< src/names.c -ldl \
		-Wl,--no-as-needed -lstdc++ -Wl,--as-needed

# The engine's pure pieces, linked with every engine source and a stub of the real-driver
# table (tests/unit/stub_driver.c) instead of the hook layer and libcuda.
ENGINE_UNIT_SRC := $(wildcard src/engine/*.c) $(CONFIG_SRC) src/nvtx.c \
	tests/unit/stub_driver.c $(BUILD)/gen/g_names.c
ENGINE_UNIT_DEPS := $(ENGINE_UNIT_SRC) $(wildcard src/engine/*.h) src/driver/real.h \
	tests/unit/unit.h tests/unit/engine_fixture.h $(LIB)

$(TEST_UNIT_DIR)/test_%: tests/unit/test_%.c $(ENGINE_UNIT_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TEST_UNIT_CFLAGS) -Itests/unit -o $@ $< $(ENGINE_UNIT_SRC) -ldl -lpthread

.PHONY: test test-unit test-bats test-progs
test-progs: $(TEST_PROGS)

test-unit: $(TEST_UNITS)
	@for t in $(TEST_UNITS); do echo "$$t"; $$t || exit 1; done

test-bats: $(LIB) $(TEST_PROGS) fakecuda-selftest
	AG_BUILD=$(abspath $(BUILD)) AG_KERNELS_PTX=$(abspath $(KERNELS_PTX)) \
	AG_FAKECUDA_LIB=$(abspath $(FAKECUDA_LIB)) AG_CUDA_INCLUDE=$(abspath $(CUDA_INCLUDE)) \
	BATS_LIB_PATH=$(BATS_LIB_PATH) $(BATS) $(BATS_FLAGS) tests/

# The bats files whose outcome depends on execution order, once more with the stand-in
# executing asynchronously (AG_FAKE_ASYNC=1: a worker thread per stream, so reordered
# work computes wrong results instead of only showing in the trace).
ASYNC_BATS := tests/engine_scenarios.bats tests/engine_fuzz.bats tests/threads.bats tests/exit.bats \
	tests/adversary.bats

.PHONY: test-async
test-async: $(LIB) $(TEST_PROGS) fakecuda-selftest
	AG_FAKE_ASYNC=1 AG_BUILD=$(abspath $(BUILD)) AG_KERNELS_PTX=$(abspath $(KERNELS_PTX)) \
	AG_FAKECUDA_LIB=$(abspath $(FAKECUDA_LIB)) AG_CUDA_INCLUDE=$(abspath $(CUDA_INCLUDE)) \
	BATS_LIB_PATH=$(BATS_LIB_PATH) $(BATS) $(BATS_FLAGS) $(ASYNC_BATS)

test: test-unit test-bats test-async
