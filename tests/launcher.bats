#!/usr/bin/env bats
# The autograph launcher: flags and --help from src/options.def, --version, usage
# errors and the exit status it passes through. `autograph compare` has compare.bats,
# installing has install.bats.

setup() {
    load test_helper/common-setup
    _common_setup
    LAUNCHER="$BUILD/autograph"
    [ -x "$LAUNCHER" ] || fail "$LAUNCHER is missing: run 'make test'"
}

@test "autograph --help lists every option of src/options.def, and no source paths" {
    run "$LAUNCHER" --help
    assert_success
    local env n=0
    while read -r env; do
        assert_output --partial "$env"
        n=$((n + 1))
    done < <(sed -n 's/^AG_OPT([A-Z_]*, *"\(AUTOGRAPH[A-Z_]*\)".*/\1/p' "$ROOT/src/options.def")
    (( n >= 12 )) || fail "only $n options read from options.def"
    assert_output --partial 'autograph compare [-n N]'
    # A user reads --help without the source tree: no file of it is named.
    refute_output --regexp 'src/|\.def\b|\.[ch]\b|\.mk\b'
}

@test "autograph --version: the version, the CUDA headers it was built with, the commit" {
    run "$LAUNCHER" --version
    assert_success
    local cuda major minor commit
    cuda="$(sed -n 's/^#define CUDA_VERSION \([0-9]*\)$/\1/p' "$CUDA_H")"
    major=$((cuda / 1000)) minor=$((cuda % 1000 / 10))
    if commit="$(git -c safe.directory='*' -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null)"; then
        assert_output --regexp "^autograph [0-9]+\.[0-9]+\.[0-9]+ \(CUDA $major\.$minor headers, commit $commit\)$"
    else
        assert_output --regexp "^autograph [0-9]+\.[0-9]+\.[0-9]+ \(CUDA $major\.$minor headers, commit unknown\)$"
    fi
}

@test "autograph --version without git says commit unknown" {
    cp -a "$BUILD" "$T/build"
    run make -C "$ROOT" --no-print-directory BUILD="$T/build" GIT=false "$T/build/autograph"
    assert_success
    run "$T/build/autograph" --version
    assert_output --regexp '^autograph [0-9.]+ \(CUDA [0-9]+\.[0-9]+ headers, commit unknown\)$'
}

@test "autograph: a bad flag value, an unknown flag, no program: one line, exit 2" {
    run --separate-stderr "$LAUNCHER" --warmup x -- true
    assert_equal "$status" 2
    assert_equal "$(wc -l <<<"$stderr")" 1
    assert_regex "$stderr" '--warmup.*x'
    run --separate-stderr "$LAUNCHER" --no-such-flag -- true
    assert_equal "$status" 2
    assert_equal "$stderr" 'autograph: error: unknown option --no-such-flag (see autograph --help)'
    run --separate-stderr "$LAUNCHER"
    assert_equal "$status" 2
    assert_equal "$(wc -l <<<"$stderr")" 1
}

@test "autograph passes the program's exit status through" {
    run "$LAUNCHER" -- sh -c 'exit 7'
    assert_equal "$status" 7
}
