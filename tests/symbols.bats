#!/usr/bin/env bats
# The library's dynamic symbol table: only the interposed names leave it.

setup() {
    load test_helper/common-setup
    _common_setup
}

@test "only dlsym, dlvsym, cu* and the signal disposition names are exported" {
    run bash -c "nm -D --defined-only '$LIB' | awk '{print \$3}'"
    assert_success
    assert_line dlsym
    assert_line dlvsym
    assert_line cuLaunchKernel
    assert_line cuGetProcAddress_v2
    run bash -c "nm -D --defined-only '$LIB' | awk '{print \$3}' | grep -Ev '^(dlsym|dlvsym|cu[A-Z][A-Za-z0-9_]*|sigaction|signal|bsd_signal|__sysv_signal|sysv_signal)\$'"
    assert_output ""
}

@test "every function the stand-in exports has an exported wrapper" {
    # A -lcuda program links to these names; each must be interposed.
    run bash -c "comm -23 <(nm -D --defined-only '$FAKECUDA_LIB' | awk '{print \$3}' | sort) \
        <(nm -D --defined-only '$LIB' | awk '{print \$3}' | sort)"
    assert_success
    assert_output ""
}
