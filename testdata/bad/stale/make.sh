#!/usr/bin/env bash
# Makes testdata/bad/stale/: record files and index files that do not belong
# together (docs/FORMAT.md §6 and §8, `stale_index`), checked by tests/index/stale_index.rs;
# testdata/README.md says what each one is. Needs cargo and coreutils; the
# index files are written by recordwire itself (the native format is frozen).
#
#   testdata/bad/stale/make.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cargo build --quiet --manifest-path "$root/Cargo.toml" --bin recordwire
rw="$root/target/debug/recordwire"
cd "$here"

# index DATA NAME: DATA's index in the three formats, as NAME.rwindex,
# NAME.tfindex (DALI text) and NAME.lirs (raw offset table).
index() {
    "$rw" index "$1" --format native --out "$2.rwindex" >/dev/null
    "$rw" index "$1" --format dali --out "$2.tfindex" >/dev/null
    "$rw" index "$1" --format lirs --out "$2.lirs" >/dev/null
}

# start DATA ID: the byte offset of record ID of DATA.
start() {
    "$rw" index "$1" --format dali --out - | sed -n "$(($2 + 1))p" | cut -d' ' -f1
}

for f in tfrecord ofrecord; do
    base="../base5.$f"
    # The indexes of base5 (5 records), used with the three files below.
    index "$base" "base5.$f"
    # base5 appended to itself (10 records).
    cat "$base" "$base" >"appended.$f"
    # base5 cut after its first 3 records.
    head -c "$(start "$base" 3)" "$base" >"truncated.$f"
    # base5 with one payload byte of record 2 changed: same size, same frames.
    cp "$base" "rewritten.$f"
    header=12
    [ "$f" = ofrecord ] && header=8
    printf '\377' | dd of="rewritten.$f" bs=1 seek=$(($(start "$base" 2) + header + 5)) \
        conv=notrunc status=none
done

# The indexes of other files, used with base5.
index ../../ref/examples.tfrecord examples.tfrecord
index ../../ref/ofrecord.part-0 part-0.ofrecord
ls -l "$here"
