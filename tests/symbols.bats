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

@test "thread-local variables are reached without __tls_get_addr, except the period detector's sort buffers" {
    # A thread-local declared without tls_model("initial-exec") is reached through a call
    # into the loader in every file that uses it: ag_stream_locked's extern declaration
    # lacked it, which cost two calls an operation in ag_engine_submit (28 instructions of
    # each launch, callgrind). detect.c's sort buffers are large and rarely used, so they
    # stay out of the static TLS block.
    run bash -c "objdump -d --no-show-raw-insn '$LIB' | awk '/>:\$/ {fn = \$2} /call.*<__tls_get_addr/ {print fn}' | sort -u"
    assert_success
    assert_output "<ag_detect_commit>:"
}
