# Sourced by scripts/rayon-tests.sh and scripts/other-crates.sh: what both need to bring
# published sources through cargo. The caller sets `script` (its name, for messages).

# Exits 2 unless every tool named is on PATH.
need_tools() {
    local tool
    for tool in "$@"; do
        if ! command -v "$tool" >/dev/null; then
            echo "$script: needs $tool" >&2
            exit 2
        fi
    done
}

# Runs a cargo command offline first (the registry cache usually has everything), online
# when something is missing.
offline_first() {
    if ! "$@" --offline >/dev/null 2>&1; then
        echo "$script: online: $*" >&2
        "$@" >&2
    fi
}
