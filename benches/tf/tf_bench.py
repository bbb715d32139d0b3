#!/usr/bin/env python3
"""TensorFlow's read path over the recordwire benchmark corpora.

Measures records/s and MB/s (file bytes / wall time, MB = 10^6 bytes) of

  framing               tf.data.TFRecordDataset(path), every record delivered
  parse_example         TFRecordDataset -> .batch(B) -> .map(tf.io.parse_example)
  parse_single_example  TFRecordDataset -> .map(tf.io.parse_single_example)

each with a full FixedLenFeature spec (every value of every feature decoded),
and, reported separately, the same three with "+autotune":
num_parallel_reads=AUTOTUNE, num_parallel_calls=AUTOTUNE and
.prefetch(AUTOTUNE). Optional mode "framing_pyiter" iterates the dataset from
Python (`for r in ds`), as a naive eager loop would.

The corpora are the files `cargo run --release --example gen_corpus -- DIR`
writes (benches/common/corpus.rs): DIR/bert.tfrecord and DIR/image.tfrecord.

Every epoch runs inside TensorFlow: Dataset.reduce in a tf.function traced
during the warm-up epoch, so Python is not in the per-record path. The reducer
takes batches, not records: parse_example's own batches of B, and for framing
and parse_single_example the records (or parsed records) gathered by
.batch(--sink, default 1024) inside tf.data, because one reduce step (or one
Python loop step) per record costs far more than the record itself; the copy
into the sink batch is included in those two modes. "framing_pyiter" (not run
by default) is the per-record Python loop, for reference.

Each measurement: one warm-up epoch, then N timed epochs; the median and best
are reported, rates are from the median. Each epoch asserts the record count
(against an independent scan of the frame headers in Python), and: framing,
the payload bytes (file size - 16 per record); parsing, the number of decoded
values (445 per BERT record, 27 per image record) and a checksum of decoded
values the generator fixes (BERT: sum of masked_lm_weights = 10 per record;
image: height + width = 448 and len(image/encoded) = 100000 per record), so a
broken pipeline fails instead of getting faster.

CRCs: TensorFlow's RecordReader (xla/tsl/lib/io/record_reader.cc,
ReadChecksummed) checks the length CRC and the data CRC of every record, with
no option to turn either off; every mode here reads through it. The script
also probes this at run time (unless --no-crc-probe): it writes a copy of
the file's first records with one bit of a stored length CRC, or of a stored
data CRC, flipped (payload intact), runs each mode over it and reports which
flip made the mode fail with DataLossError.

Usage:
  TF_CPP_MIN_LOG_LEVEL=2 python3 benches/tf/tf_bench.py [FILE...] \
      [--schema bert|image] [--batch 256] [--epochs 5] [--modes ...] \
      [--sink 1024] [--no-autotune] [--no-crc-probe] [--json]
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import struct
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

DEFAULT_FILES = ["/tmp/corpus/bert.tfrecord", "/tmp/corpus/image.tfrecord"]
BASE_MODES = ["framing", "parse_example", "parse_single_example"]
ALL_MODES = BASE_MODES + [m + "+autotune" for m in BASE_MODES] + ["framing_pyiter"]

# Values per record and checksum per record, for the assertions.
SCHEMAS = {
    "bert": {
        "spec": {
            "input_ids": tf.io.FixedLenFeature([128], tf.int64),
            "input_mask": tf.io.FixedLenFeature([128], tf.int64),
            "segment_ids": tf.io.FixedLenFeature([128], tf.int64),
            "masked_lm_positions": tf.io.FixedLenFeature([20], tf.int64),
            "masked_lm_ids": tf.io.FixedLenFeature([20], tf.int64),
            "masked_lm_weights": tf.io.FixedLenFeature([20], tf.float32),
            "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
        },
        "values": 445,
        "checksum": 10,
    },
    "image": {
        "spec": {
            "image/encoded": tf.io.FixedLenFeature([], tf.string),
            "image/format": tf.io.FixedLenFeature([], tf.string),
            "image/class/label": tf.io.FixedLenFeature([], tf.int64),
            "image/height": tf.io.FixedLenFeature([], tf.int64),
            "image/width": tf.io.FixedLenFeature([], tf.int64),
            "image/object/bbox/xmin": tf.io.FixedLenFeature([4], tf.float32),
            "image/object/bbox/xmax": tf.io.FixedLenFeature([4], tf.float32),
            "image/object/bbox/ymin": tf.io.FixedLenFeature([4], tf.float32),
            "image/object/bbox/ymax": tf.io.FixedLenFeature([4], tf.float32),
            "image/filename": tf.io.FixedLenFeature([], tf.string),
            "image/synset": tf.io.FixedLenFeature([], tf.string),
            "image/object/bbox/label": tf.io.FixedLenFeature([4], tf.int64),
        },
        "values": 27,
        "checksum": 224 + 224 + 100_000,
    },
}


def checksum(schema, parsed):
    """A sum over decoded values whose expected value the generator fixes."""
    if schema == "bert":
        return tf.cast(tf.reduce_sum(parsed["masked_lm_weights"]), tf.int64)
    return (
        tf.reduce_sum(parsed["image/height"])
        + tf.reduce_sum(parsed["image/width"])
        + tf.cast(tf.reduce_sum(tf.strings.length(parsed["image/encoded"])), tf.int64)
    )


def scan_frames(path):
    """Counts records by walking the frame headers (no TensorFlow involved)."""
    n = 0
    off = 0
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        while off < size:
            f.seek(off)
            head = f.read(8)
            if len(head) < 8:
                raise SystemExit(f"{path}: truncated header at {off}")
            (length,) = struct.unpack("<Q", head)
            off += 16 + length
            n += 1
    if off != size:
        raise SystemExit(f"{path}: last frame runs past the end ({off} > {size})")
    return n, size


def detect_schema(path, forced):
    if forced:
        return forced
    base = os.path.basename(path).lower()
    for name in SCHEMAS:
        if name in base:
            return name
    raise SystemExit(f"{path}: cannot tell the schema from the name; pass --schema bert|image")


def build(path, schema, mode, batch, sink):
    """The dataset and the reducer for one mode; the state is (records, values, checksum).

    Elements reach the reducer in batches (parse_example: its own B; framing
    and parse_single_example: gathered by .batch(sink) inside tf.data), since a
    Dataset.reduce step or a Python loop step per record costs far more than
    the record itself (see README)."""
    auto = mode.endswith("+autotune")
    base = mode[: -len("+autotune")] if auto else mode
    spec = SCHEMAS[schema]["spec"]
    par = tf.data.AUTOTUNE if auto else None
    ds = tf.data.TFRecordDataset(path, num_parallel_reads=par)
    zero = tf.constant(0, tf.int64)
    # A feature every record has once, to count rows by.
    key = "next_sentence_labels" if schema == "bert" else "image/encoded"

    def parsed_red(state, parsed):
        n, v, c = state
        rows = tf.cast(tf.shape(parsed[key])[0], tf.int64)
        vals = tf.add_n([tf.size(t, out_type=tf.int64) for t in parsed.values()])
        return n + rows, v + vals, c + checksum(schema, parsed)

    if base in ("framing", "framing_pyiter"):
        if base == "framing":
            ds = ds.batch(sink)

        def red(state, recs):
            # values = payload bytes, checked against the file size.
            n, v, c = state
            return (n + tf.size(recs, out_type=tf.int64),
                    v + tf.cast(tf.reduce_sum(tf.strings.length(recs)), tf.int64), c)
    elif base == "parse_example":
        ds = ds.batch(batch).map(lambda x: tf.io.parse_example(x, spec), num_parallel_calls=par)
        red = parsed_red
    elif base == "parse_single_example":
        ds = ds.map(lambda x: tf.io.parse_single_example(x, spec),
                    num_parallel_calls=par).batch(sink)
        red = parsed_red
    else:
        raise ValueError(mode)
    if auto:
        ds = ds.prefetch(tf.data.AUTOTUNE)
    return ds, red, (zero, zero, zero)


def make_epoch(path, schema, mode, batch, sink):
    """A callable running one epoch and returning (records, values, checksum)."""
    ds, red, init = build(path, schema, mode, batch, sink)
    if mode == "framing_pyiter":
        def epoch():
            n = 0
            nbytes = 0
            for r in ds:
                n += 1
                nbytes += len(r.numpy())
            return n, nbytes, 0
        return epoch

    @tf.function
    def run():
        return ds.reduce(init, red)

    def epoch():
        n, v, c = run()
        return int(n), int(v), int(c)
    return epoch


def check(path, schema, mode, got, records, size):
    n, v, c = got
    exp = SCHEMAS[schema]
    want = (records, size - 16 * records, 0) if mode.startswith("framing") else (
        records, records * exp["values"], records * exp["checksum"])
    if (n, v, c) != want:
        raise SystemExit(
            f"{path} {mode}: got (records, values, checksum) = {(n, v, c)}, want {want}")


def measure(path, schema, mode, batch, sink, epochs, records, size):
    epoch = make_epoch(path, schema, mode, batch, sink)
    check(path, schema, mode, epoch(), records, size)  # warm-up (and tracing)
    times = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        got = epoch()
        times.append(time.perf_counter() - t0)
        check(path, schema, mode, got, records, size)
    return statistics.median(times), min(times)


def crc_probe(path, schema, modes, batch, sink, keep=3):
    """Which CRC flips make each mode fail: 'length+data', 'length', 'data' or 'none'."""
    with open(path, "rb") as f:
        buf = f.read()
    frames = []
    off = 0
    while off < len(buf) and len(frames) < keep:
        (length,) = struct.unpack_from("<Q", buf, off)
        frames.append((off, length))
        off += 16 + length
    head = bytearray(buf[:off])
    victim_off, victim_len = frames[min(1, len(frames) - 1)]
    flips = {
        "length": victim_off + 8,                   # first byte of the length CRC
        "data": victim_off + 12 + victim_len,       # first byte of the data CRC
    }
    result = {}
    with tempfile.TemporaryDirectory() as d:
        files = {}
        for what, at in flips.items():
            b = bytearray(head)
            b[at] ^= 1
            p = os.path.join(d, f"{schema}-{what}.tfrecord")
            with open(p, "wb") as f:
                f.write(b)
            files[what] = p
        clean = os.path.join(d, f"{schema}-clean.tfrecord")
        with open(clean, "wb") as f:
            f.write(head)
        for mode in modes:
            epoch = make_epoch(clean, schema, mode, batch, sink)
            check(clean, schema, mode, epoch(), len(frames), len(head))
            caught = []
            for what, p in files.items():
                try:
                    make_epoch(p, schema, mode, batch, sink)()
                except tf.errors.DataLossError as e:
                    if "corrupted record" in str(e):
                        caught.append(what)
            result[mode] = "+".join(caught) if caught else "none"
    return result


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except OSError:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", default=DEFAULT_FILES)
    ap.add_argument("--schema", choices=sorted(SCHEMAS))
    ap.add_argument("--batch", type=int, default=256, help="B for parse_example (default 256)")
    ap.add_argument("--epochs", type=int, default=5, help="timed epochs after one warm-up")
    ap.add_argument("--sink", type=int, default=1024,
                    help="framing and parse_single_example hand records on to the "
                         "counting reducer in batches of this many (default 1024)")
    ap.add_argument("--modes", nargs="+", choices=ALL_MODES,
                    help="default: the three base modes, then the three +autotune ones")
    ap.add_argument("--no-autotune", action="store_true", help="skip the +autotune modes")
    ap.add_argument("--no-crc-probe", action="store_true")
    ap.add_argument("--json", action="store_true",
                    help="also print one JSON object per measurement")
    args = ap.parse_args()

    modes = args.modes or (BASE_MODES if args.no_autotune
                           else BASE_MODES + [m + "+autotune" for m in BASE_MODES])
    nproc = os.cpu_count()
    aff = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else nproc
    try:
        import google.protobuf
        pb = google.protobuf.__version__
    except ImportError:
        pb = "?"
    print(f"# {datetime.date.today().isoformat()}  TensorFlow {tf.__version__}  "
          f"protobuf {pb}  Python {platform.python_version()}")
    print(f"# machine: {platform.machine()} {platform.processor() or ''} nproc={nproc} "
          f"(usable {aff}); TF threads at defaults (inter_op="
          f"{tf.config.threading.get_inter_op_parallelism_threads()}, intra_op="
          f"{tf.config.threading.get_intra_op_parallelism_threads()}; 0 = TF picks)")
    print(f"# one warm-up epoch, then {args.epochs} timed; rates from the median; "
          f"MB = 10^6 file bytes; file is in the page cache after the warm-up; "
          f"framing/parse_single_example reach the reducer in batches of {args.sink}")
    print(f"# load average (1 min) at start: {loadavg()} -- other work on the machine "
          f"slows tf.data's thread hand-offs badly; run on an idle machine")

    rows = []
    for path in args.files:
        schema = detect_schema(path, args.schema)
        records, size = scan_frames(path)
        crc = {} if args.no_crc_probe else crc_probe(path, schema, modes, args.batch, args.sink)
        for mode in modes:
            batch = args.batch if mode.startswith("parse_example") else 1
            load = loadavg()
            med, best = measure(path, schema, mode, batch, args.sink, args.epochs, records, size)
            row = {
                "file": path,
                "schema": schema,
                "mode": mode,
                "batch": batch,
                "records": records,
                "seconds_median": med,
                "seconds_best": best,
                "records_per_second": records / med,
                "mb_per_second": size / med / 1e6,
                "tf_version": tf.__version__,
                "file_bytes": size,
                "epochs": args.epochs,
                "sink_batch": None if mode.startswith("parse_example") or mode == "framing_pyiter"
                else args.sink,
                "loadavg_before": load,
                "nproc": nproc,
                "crc_checked": crc.get(mode, "not probed"),
            }
            rows.append(row)
            print(f"  {schema:5} {mode:27} B={batch:<4} {records / med:>12,.0f} rec/s "
                  f"{size / med / 1e6:>8.1f} MB/s", file=sys.stderr, flush=True)

    hdr = (f"{'file':28} {'mode':27} {'B':>4} {'records':>7} {'median s':>9} {'best s':>9} "
           f"{'rec/s (med)':>12} {'MB/s (med)':>10} {'rec/s (best)':>12}  CRCs checked")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        print(f"{os.path.basename(r['file']):28} {r['mode']:27} {r['batch']:>4} "
              f"{r['records']:>7} {r['seconds_median']:>9.4f} {r['seconds_best']:>9.4f} "
              f"{r['records_per_second']:>12,.0f} {r['mb_per_second']:>10.1f} "
              f"{r['records'] / r['seconds_best']:>12,.0f}  {r['crc_checked']}")
    if args.json:
        for r in rows:
            print(json.dumps(r))


if __name__ == "__main__":
    main()
