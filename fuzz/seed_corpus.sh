#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from testdata/ (the corpus itself is not committed).
#
#   framing, stream         whole record files of testdata/ref, testdata/index, testdata/bad and
#                           testdata/bad/hostile (the first 16 KiB of bigger ones)
#   example_view            the payloads of the tf.Example files (and the hostile ones)
#   sequence_example_view   the payloads of the tf.SequenceExample file (and the hostile
#                           TFRecord files)
#   ofrecord_view           the payloads of the OFRecord files (and the hostile ones)
#   json, dump, roundtrip   all of those payloads
#   json_read               the lines of the .jsonl files (up to 16 KiB)
#   index                   u16 index length + index + data: the small record files with no
#                           index, and with their native, DALI and offset-table indexes when a
#                           built `recordwire` is at $RECORDWIRE (default ../target/release/recordwire)
#   batch_decode            a spec byte (0 to 3, see fuzz/src/batch.rs) + each payload above
#   arch_kernels            the whole files (as framing), cut to 4 KiB: any bytes do
#   deflate                 the raw deflate data of the .gz and .zlib files (GZIP/ZLIB header
#                           and trailer cut off when the header is the plain 10 or 2 bytes), up
#                           to 16 KiB; and the first 4 KiB of the other files, to compress
#   gz_index                a spacing byte (12: 4 KiB) + the .gz and .zlib files (up to 16 KiB);
#                           the kept corpus holds whole small valid ones
#   schema_json             a schema byte (0 to 4, see fuzz/src/schema.rs) + each payload of
#                           testdata/schema/ read by that schema
#   order                   one input per mode, tail policy and scale (the first byte picks
#                           them, see fuzz/src/order.rs), the rest cut from a reference file
#
# plus testdata/fuzz-regressions/<target>-*.bin and the minimized corpus kept in
# the repository, testdata/fuzz-corpus/<target>/, for each target. Payloads are
# cut out of the frames with coreutils only (no build needed). Run it from
# anywhere; it is idempotent.
set -euo pipefail
cd "$(dirname "$0")"
testdata=../testdata
corpus=corpus
max=16384

targets="framing stream example_view sequence_example_view ofrecord_view json dump roundtrip json_read index order batch_decode arch_kernels deflate gz_index schema_json"
for t in $targets; do mkdir -p "$corpus/$t"; done

# Whole files, for the frame readers.
for f in "$testdata"/ref/* "$testdata"/index/*.tfrecord "$testdata"/bad/* "$testdata"/bad/hostile/*; do
    case "$f" in *.json | *.jsonl | *.md) continue ;; esac
    [ -f "$f" ] || continue
    name=$(basename "$(dirname "$f")")-$(basename "$f")
    for t in framing stream; do
        head -c "$max" "$f" >"$corpus/$t/$name"
    done
    head -c 4096 "$f" >"$corpus/arch_kernels/$name"
    case "$f" in
    *.gz | *.zlib | *.zz)
        skip=2
        case "$f" in *.gz) skip=10 ;; esac
        dd if="$f" of="$corpus/deflate/$name" iflag=skip_bytes,count_bytes \
            skip="$skip" count="$max" status=none
        # gz_index: a spacing byte (4 KiB: 12), then the whole file.
        { printf '\014'; head -c "$max" "$f"; } >"$corpus/gz_index/$name"
        ;;
    *) head -c 4096 "$f" >"$corpus/deflate/$name" ;;
    esac
done

# payloads FILE HEADER_LEN FOOTER_LEN TARGET...: copies the data of every
# whole frame of FILE (up to $max bytes) to each TARGET's corpus.
payloads() {
    local file=$1 header=$2 footer=$3
    shift 3
    local size offset=0 id=0 len name t
    size=$(wc -c <"$file")
    while [ $((offset + header)) -le "$size" ]; do
        len=$(od -An -t d8 -j "$offset" -N 8 "$file" | tr -d ' ')
        # (Compared without adding to len: a huge one would overflow.)
        if [ "$len" -lt 0 ] || [ "$len" -gt $((size - offset - header - footer)) ]; then
            break
        fi
        if [ "$len" -le "$max" ]; then
            name=$(basename "$file")-$id
            for t in "$@"; do
                dd if="$file" of="$corpus/$t/$name" iflag=skip_bytes,count_bytes \
                    skip=$((offset + header)) count="$len" status=none
            done
        fi
        offset=$((offset + header + len + footer))
        id=$((id + 1))
    done
}

for f in "$testdata"/ref/examples.tfrecord "$testdata"/ref/small.tfrecord \
    "$testdata"/bad/base5.tfrecord "$testdata"/bad/tf_decode_error*.tfrecord; do
    payloads "$f" 12 4 example_view json dump roundtrip
done
payloads "$testdata"/ref/sequence_examples.tfrecord 12 4 sequence_example_view json dump roundtrip
for f in "$testdata"/ref/ofrecord.part-0 "$testdata"/bad/base5.ofrecord \
    "$testdata"/bad/of_decode_error*.ofrecord; do
    payloads "$f" 8 0 ofrecord_view json dump roundtrip
done
# The payloads of the hostile suite (deep nesting, long varints, bad wire
# types...), up to the first frame too damaged to cut.
for f in "$testdata"/bad/hostile/*.tfrecord; do
    [ -f "$f" ] || continue
    payloads "$f" 12 4 example_view sequence_example_view json dump roundtrip
done
for f in "$testdata"/bad/hostile/*.ofrecord; do
    [ -f "$f" ] || continue
    payloads "$f" 8 0 ofrecord_view json dump roundtrip
done

# JSON records, one line each.
for f in "$testdata"/ref/*.jsonl "$testdata"/bad/*.jsonl; do
    split -l 1 -d -a 4 "$f" "$corpus/json_read/$(basename "$f")-"
done
find "$corpus/json_read" -type f -size +"$max"c -delete

# Index and data: "<u16 LE index length><index><data>".
recordwire=${RECORDWIRE:-../target/release/recordwire}
for f in "$testdata"/ref/small.tfrecord "$testdata"/ref/sequence_examples.tfrecord \
    "$testdata"/ref/ofrecord.part-0 "$testdata"/bad/base5.tfrecord "$testdata"/bad/base5.ofrecord; do
    name=$(basename "$f")
    { printf '\000\000'; cat "$f"; } >"$corpus/index/$name"
    [ -x "$recordwire" ] || continue
    for format in native dali lirs; do
        "$recordwire" index --format "$format" --out "$corpus/index/.idx" "$f" >/dev/null 2>&1 || continue
        n=$(wc -c <"$corpus/index/.idx")
        {
            printf "\\$(printf %03o $((n % 256)))\\$(printf %03o $((n / 256)))"
            cat "$corpus/index/.idx" "$f"
        } >"$corpus/index/$name.$format"
    done
    rm -f "$corpus/index/.idx"
done

# Order configurations: the first byte is the mode (byte / 3 % 4), the tail
# policy (byte % 3) and the scale (bit 7: large); 64 more bytes for the seed,
# epoch, shard and record sizes.
for first in $(seq 0 11) $(seq 128 139); do
    {
        printf "\\$(printf %03o "$first")"
        dd if="$testdata/ref/small.tfrecord" bs=1 skip=$((first * 3)) count=64 status=none
    } >"$corpus/order/seed-$first"
done

# The batched decoder: a spec byte (which spec of fuzz/src/batch.rs) + a payload.
seed_batch() {
    local from=$1 f
    shift
    for f in "$corpus/$from"/*; do
        [ -f "$f" ] || continue
        for pick in "$@"; do
            { printf "\\$(printf %03o "$pick")"; cat "$f"; } >"$corpus/batch_decode/$pick-$(basename "$f")"
        done
    done
}
seed_batch example_view 0 1
seed_batch sequence_example_view 2
seed_batch ofrecord_view 3

# The schema printer: a schema byte (which schema of fuzz/src/schema.rs) + a
# payload of that schema's file.
seed_schema() {
    local file=$1 pick=$2 f
    mkdir -p "$corpus/.schema"
    payloads "$file" 12 4 .schema
    for f in "$corpus/.schema"/*; do
        [ -f "$f" ] || continue
        { printf "\\$(printf %03o "$pick")"; cat "$f"; } >"$corpus/schema_json/$pick-$(basename "$f")"
    done
    rm -rf "$corpus/.schema"
}
seed_schema "$testdata"/schema/shapes.tfrecord 0
seed_schema "$testdata"/schema/legacy.tfrecord 1
seed_schema "$testdata"/schema/wkt.tfrecord 2
seed_schema "$testdata"/schema/conformance/proto2.tfrecord 3
seed_schema "$testdata"/schema/conformance/proto3.tfrecord 4

# Inputs that once crashed a target, and the corpus kept in the repository.
for t in $targets; do
    for f in "$testdata"/fuzz-regressions/"$t"-*.bin; do
        if [ -f "$f" ]; then cp "$f" "$corpus/$t/"; fi
    done
    if [ -d "$testdata/fuzz-corpus/$t" ]; then
        cp "$testdata/fuzz-corpus/$t"/* "$corpus/$t/" 2>/dev/null || true
    fi
done

for t in "$corpus"/*/; do
    printf '%-24s %4d inputs\n' "$(basename "$t")" "$(find "$t" -type f | wc -l)"
done
