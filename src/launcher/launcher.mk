# The launcher `autograph` and its man page; included by the top Makefile after LIB,
# BUILD, CUDA_HOME, CC, VERSION and PREFIX are defined. The launcher shares the option
# table and its parser with the library (src/config.c, src/log.c); it depends on $(LIB)
# so that the generated headers in $(BUILD)/gen exist, and so that `make $(LAUNCHER)`
# leaves a launcher that finds its library beside it.
#
#   make $(LAUNCHER)        build/autograph
#   make install-launcher   bin/autograph and share/man/man1/autograph.1 under PREFIX

LAUNCHER := $(BUILD)/autograph
MANPAGE  := docs/autograph.1

LAUNCHER_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-D__CUDA_API_VERSION_INTERNAL -DAG_VERSION=\"$(VERSION)\" \
	-Isrc -I$(BUILD)/gen -I$(CUDA_INCLUDE)
LAUNCHER_SRC := src/launcher/autograph.c src/config.c src/log.c src/pathfmt.c src/names.c

$(LAUNCHER): $(LAUNCHER_SRC) src/config.h src/log.h src/pathfmt.h src/names.h src/options.def src/launcher/launcher.mk $(LIB)
	$(CC) $(LAUNCHER_CFLAGS) -o $@ $(LAUNCHER_SRC)

.PHONY: install-launcher
install-launcher: $(LAUNCHER) $(MANPAGE)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(LAUNCHER) $(DESTDIR)$(PREFIX)/bin/autograph
	install -m 0644 $(MANPAGE) $(DESTDIR)$(PREFIX)/share/man/man1/autograph.1

# tests/tools.bats runs the launcher.
test-bats: $(LAUNCHER)
