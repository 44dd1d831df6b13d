# `autograph analyze`: the engine's own sources linked with src/analyze/ in place of the
# driver (driver.c), the timer thread (timer.c) and the cycle counter (driver.c's clock),
# so that a trace replays the same detection on the CPU. Included by the top Makefile;
# the launcher runs $(ANALYZER) from beside itself.
#
#   make $(ANALYZER)         build/autograph-analyze
#   make install-analyzer    bin/autograph-analyze (stripped)

ANALYZER := $(BUILD)/autograph-analyze
ANALYZER_SRC := $(wildcard src/analyze/*.c) \
	$(filter-out src/engine/watchdog.c,$(wildcard src/engine/*.c)) \
	src/config.c src/log.c src/pathfmt.c src/names.c src/stats.c src/nvtx.c $(BUILD)/gen/g_names.c
ANALYZER_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-D__CUDA_API_VERSION_INTERNAL -DAG_VERSION=\"$(VERSION)\" -I$(CUDA_INCLUDE) -Isrc -I$(BUILD)/gen

$(ANALYZER): $(ANALYZER_SRC) $(wildcard src/analyze/*.h src/engine/*.h src/*.h) src/options.def \
		src/stats.def src/analyze/analyze.mk $(GEN)
	$(CC) $(ANALYZER_CFLAGS) -o $@ $(ANALYZER_SRC) -ldl -lpthread

# tests/analyze.bats runs it.
test-bats test-async: $(ANALYZER)

.PHONY: install-analyzer uninstall-analyzer
install-analyzer: $(ANALYZER)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(ANALYZER) $(DESTDIR)$(PREFIX)/bin/autograph-analyze
	$(STRIP) $(DESTDIR)$(PREFIX)/bin/autograph-analyze

uninstall-analyzer:
	rm -f $(DESTDIR)$(PREFIX)/bin/autograph-analyze
