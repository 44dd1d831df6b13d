#!/usr/bin/env bats
# The user documentation stays true to the tree: every link in README.md and the docs
# it points to resolves to a file inside the repository (a clone or a tarball has
# nothing beside it), the option tables are generated from src/options.def, and the
# troubleshooting section names every fallback reason of src/stats.def.

setup() {
    load test_helper/common-setup
    _common_setup
}

@test "README.md and docs/benchmarks.md: every link resolves inside the repository" {
    run python3 - "$ROOT" README.md docs/benchmarks.md <<'PY'
import os, re, sys
root = os.path.realpath(sys.argv[1])
bad = []
for doc in sys.argv[2:]:
    text = open(os.path.join(root, doc)).read()
    here = os.path.dirname(os.path.join(root, doc))
    # Markdown links and images, and paths quoted in backticks that leave the tree.
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    bad += ["%s: %s (outside the repository)" % (doc, t)
            for t in re.findall(r"`(\.\./[^`]*)`", text)]
    # GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens.
    anchors = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
               for h in re.findall(r"^#+ (.*)$", text, re.M)}
    for t in targets:
        if t.startswith("#"):
            if t[1:] not in anchors:
                bad.append("%s: %s (no such heading)" % (doc, t))
            continue
        if re.match(r"[a-z]+:", t):
            bad.append("%s: %s (not a file of the repository)" % (doc, t))
            continue
        path = os.path.realpath(os.path.join(here, t.split("#")[0]))
        if not path.startswith(root + os.sep) or not os.path.exists(path):
            bad.append("%s: %s (does not resolve inside the repository)" % (doc, t))
    if not targets:
        bad.append("%s: no links found (is the pattern right?)" % doc)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
    assert_success
}

@test "the README's and the man page's option tables match src/options.def" {
    run "$ROOT/scripts/gen-options-doc" --check "$ROOT/README.md" "$ROOT/docs/autograph.1"
    assert_success
}

@test "README troubleshooting names every fallback reason of src/stats.def" {
    local key n=0 section
    section="$(sed -n '/^## Nothing was graphed/,/^## /p' "$ROOT/README.md")"
    [ -n "$section" ] || fail "README.md has no '## Nothing was graphed' section"
    while read -r key; do
        [[ "$section" == *"\`$key\`"* ]] || fail "the troubleshooting section does not name $key"
        n=$((n + 1))
    done < <(sed -n 's/^AG_STAT([A-Z_]*, *"\(fallback_[a-z_]*\)".*/\1/p' "$ROOT/src/stats.def")
    (( n >= 9 )) || fail "only $n fallback reasons read from stats.def"
}
