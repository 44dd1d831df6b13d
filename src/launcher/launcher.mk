# The launcher `autograph` and its man page; included by the top Makefile after LIB,
# BUILD, CUDA_HOME, CC, VERSION, PREFIX, LIBDIR and STRIP are defined. The launcher
# shares the option table and its parser with the library (src/config.c, src/log.c);
# it depends on $(LIB) so that the generated headers in $(BUILD)/gen exist, and so that
# `make $(LAUNCHER)` leaves a launcher that finds its library beside it.
#
#   make $(LAUNCHER)        build/autograph (unstripped: the debug info stays here)
#   make install-launcher   bin/autograph (stripped) and share/man/man1/autograph.1
#   make uninstall-launcher removes them

LAUNCHER := $(BUILD)/autograph
MANPAGE  := docs/autograph.1

# What --version prints and where the library is looked for relative to bin/. The
# commit is "unknown" outside a git checkout (a release tarball) or without git. Only
# read-only git commands: `sudo make install` in a user's checkout must neither write
# into its .git (as a -dirty check refreshing the index would) nor, for want of
# safe.directory, see a different commit and rebuild the launcher as root.
GIT ?= git
AG_COMMIT := $(or $(shell $(GIT) -c safe.directory='*' -C $(CURDIR) rev-parse --short=12 HEAD 2>/dev/null),unknown)
LAUNCHER_DEFS := -DAG_VERSION=\"$(VERSION)\" -DAG_COMMIT=\"$(AG_COMMIT)\" -DAG_LIBDIR=\"$(LIBDIR)\"

# The definitions above are baked into the binary, so it is rebuilt when they change:
# this file is rewritten only when its content would differ.
LAUNCHER_STAMP := $(BUILD)/launcher.defs
$(LAUNCHER_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(LAUNCHER_DEFS)' | cmp -s - $@ || echo '$(LAUNCHER_DEFS)' > $@

LAUNCHER_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-D__CUDA_API_VERSION_INTERNAL $(LAUNCHER_DEFS) -Isrc -Isrc/launcher -I$(BUILD)/gen \
	-I$(CUDA_INCLUDE)
LAUNCHER_SRC := $(wildcard src/launcher/*.c) src/config.c src/log.c src/pathfmt.c src/names.c

$(LAUNCHER): $(LAUNCHER_SRC) $(wildcard src/launcher/*.h) src/config.h src/log.h src/pathfmt.h \
		src/names.h src/options.def \
		src/launcher/launcher.mk $(LAUNCHER_STAMP) $(LIB)
	$(CC) $(LAUNCHER_CFLAGS) -o $@ $(LAUNCHER_SRC) -lm

.PHONY: install-launcher uninstall-launcher FORCE
FORCE:

install-launcher: $(LAUNCHER) $(MANPAGE)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(LAUNCHER) $(DESTDIR)$(PREFIX)/bin/autograph
	$(STRIP) $(DESTDIR)$(PREFIX)/bin/autograph
	install -m 0644 $(MANPAGE) $(DESTDIR)$(PREFIX)/share/man/man1/autograph.1

uninstall-launcher:
	rm -f $(DESTDIR)$(PREFIX)/bin/autograph $(DESTDIR)$(PREFIX)/share/man/man1/autograph.1

# tests/launcher*.bats, compare.bats and install.bats run the launcher.
test-bats: $(LAUNCHER)
