#!/usr/bin/env bats
# Building and installing like a system tool: plain `make` builds the library and the
# launcher; `make install` honours PREFIX, LIBDIR and DESTDIR, strips what it installs
# and leaves the debug info in the build tree; the installed launcher finds the library
# under its LIBDIR; `make uninstall` removes every file install put there. Each test
# works on a copy of the build tree, so the tree the other tests use is never rebuilt.

setup() {
    load test_helper/common-setup
    _common_setup
    cp -a "$BUILD" "$T/build"
    ENG="$PROGS/eng_loop"
}

# has_debug_info FILE: the ELF file still has DWARF sections.
has_debug_info() {
    readelf -S "$1" | grep -q '\.debug_info'
}

@test "plain make builds the library and the launcher" {
    run make -C "$ROOT" --no-print-directory -n BUILD="$T/fresh"
    assert_success
    assert_output --partial "-o $T/fresh/libautograph.so"
    assert_output --partial "-o $T/fresh/autograph"
}

@test "make install PREFIX=...: the installed launcher finds the installed library" {
    local prefix="$T/prefix"
    run make -C "$ROOT" --no-print-directory BUILD="$T/build" PREFIX="$prefix" install
    assert_success
    [ -x "$prefix/bin/autograph" ] && [ -f "$prefix/lib/libautograph.so" ] ||
        fail "install layout: $(find "$prefix")"
    [ -f "$prefix/share/man/man1/autograph.1" ] || fail "man page not installed"
    run --separate-stderr "$prefix/bin/autograph" --stats -- "$ENG" --iters 30
    assert_success
    assert_line --regexp '^counts: launches=[0-9]+ '
    assert_regex "$stderr" 'autograph: statistics'
    assert_regex "$stderr" 'replays'
}

@test "staged install: DESTDIR, PREFIX=/usr, LIBDIR=lib/x86_64-linux-gnu; stripped; uninstall" {
    local stage="$T/stage" vars
    vars=(BUILD="$T/build" DESTDIR="$stage" PREFIX=/usr LIBDIR=lib/x86_64-linux-gnu)
    run make -C "$ROOT" --no-print-directory "${vars[@]}" install
    assert_success
    run bash -c "cd '$stage' && find . -type f | sort"
    assert_output "$(printf '%s\n' ./usr/bin/autograph ./usr/bin/autograph-analyze \
        ./usr/lib/x86_64-linux-gnu/libautograph.so ./usr/share/man/man1/autograph.1)"
    # Installed copies are stripped; the build tree keeps the debug info.
    ! has_debug_info "$stage/usr/bin/autograph" || fail "installed launcher not stripped"
    ! has_debug_info "$stage/usr/lib/x86_64-linux-gnu/libautograph.so" || fail "installed library not stripped"
    has_debug_info "$T/build/autograph" || fail "build/autograph lost its debug info"
    has_debug_info "$T/build/libautograph.so" || fail "build/libautograph.so lost its debug info"
    # The staged launcher finds the library under ../lib/x86_64-linux-gnu, relative to itself.
    run "$stage/usr/bin/autograph" --print-env
    assert_success
    assert_line "LD_PRELOAD=$stage/usr/lib/x86_64-linux-gnu/libautograph.so"
    # The stripped library still interposes: it counts every launch (30 x 5 + 4).
    run --separate-stderr "$stage/usr/bin/autograph" --stats-json "$T/s.json" -- "$ENG" --iters 30
    assert_success
    assert_equal "launches=$(json_stat "$T/s.json" launches)" "launches=154"

    run make -C "$ROOT" --no-print-directory "${vars[@]}" uninstall
    assert_success
    run find "$stage" -type f
    assert_output ''
}

@test "a launcher built for one LIBDIR says where it looked when the library is elsewhere" {
    local stage="$T/stage"
    run make -C "$ROOT" --no-print-directory BUILD="$T/build" DESTDIR="$stage" PREFIX=/usr \
        LIBDIR=lib64 install
    assert_success
    mv "$stage/usr/lib64" "$stage/usr/lib"
    run -127 --separate-stderr "$stage/usr/bin/autograph" -- true
    assert_regex "$stderr" "^autograph: error: libautograph.so is neither in $stage/usr/bin nor in $stage/usr/bin/../lib64; set AUTOGRAPH_LIBRARY"
}
