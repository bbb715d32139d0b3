#!/usr/bin/env python3
"""Batched decoding, recordwire against TensorFlow's tf.io.parse_example, in one run.

    python3 benches/tf/tf_parse_batch.py FILE SPEC.json --rust target/release/examples/batch_bench \
        [--batch 256] [--rounds 5] [--reps 5]

Both decode the same serialized records, already in memory, in batches of --batch:
TensorFlow's tf.io.parse_example (eager, on tf.constant batches, with
tf.config.threading set to 1 inter-op and 1 intra-op thread) and recordwire's
batch::Decoder (examples/batch_bench.rs: 1 and 2 threads, and the hand-written
loop over the views). The two alternate for --rounds rounds, so that both see the
same machine noise; each round reports its median ns/record, and the table gives
the median over rounds of each, and of the per-round ratios TF / recordwire.

SPEC.json is recordwire's spec format (`recordwire inspect --spec`); it is
mapped to tf.io.FixedLenFeature / VarLenFeature / FixedLenSequenceFeature as
testdata/batch/make.py does.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

TF_DTYPES = {"int64": tf.int64, "float32": tf.float32, "float": tf.float32, "bytes": tf.string,
             "string": tf.string}


def tf_features(spec):
    out = {}
    for name, f in spec.items():
        dtype = TF_DTYPES[f["dtype"]]
        default = f.get("default")
        if default is not None and dtype == tf.float32:
            default = np.asarray(default, dtype=np.float32)
        if f["form"] == "fixed_len":
            out[name] = tf.io.FixedLenFeature(f["shape"], dtype, default_value=default)
        elif f["form"] == "var_len":
            out[name] = tf.io.VarLenFeature(dtype)
        elif f["form"] == "fixed_len_sequence":
            out[name] = tf.io.FixedLenSequenceFeature(
                f["shape"], dtype, allow_missing=f.get("allow_missing", False), default_value=default)
        else:
            raise SystemExit(f"{name}: form {f['form']} has no TensorFlow equivalent")
    return out


def tf_round(batches, features, reps, n):
    times = []
    for _ in range(reps):
        t = time.perf_counter_ns()
        for b in batches:
            out = tf.io.parse_example(b, features)
        # The last batch's outputs are materialised (eager ops run synchronously anyway).
        for v in out.values():
            v.values.numpy() if isinstance(v, tf.SparseTensor) else v.numpy()
        times.append((time.perf_counter_ns() - t) / n)
    return statistics.median(times)


def rust_round(rust, path, spec_path, batch, reps):
    out = subprocess.run([rust, path, spec_path, str(batch), str(reps)], check=True,
                         capture_output=True, text=True).stdout
    return {m["measure"]: m["ns_per_record"] for m in map(json.loads, out.splitlines())}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("spec")
    ap.add_argument("--rust", required=True, help="the built examples/batch_bench binary")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    spec = json.load(open(args.spec))
    if spec.get("payload", "example") != "example":
        raise SystemExit("only example specs are compared with parse_example")
    features = tf_features(spec["features"])
    records = [r.numpy() for r in tf.data.TFRecordDataset(args.file)]
    n = len(records)
    batches = [tf.constant(records[i:i + args.batch]) for i in range(0, n, args.batch)]
    print(f"# {args.file}: {n} records, batches of {args.batch}; tensorflow {tf.__version__}, "
          f"numpy {np.__version__}, python {sys.version.split()[0]}; load {os.getloadavg()[0]:.2f}")
    rows = {"tf_parse_example": [], "decode_1": [], "decode_2": [], "views": []}
    for r in range(args.rounds):
        rows["tf_parse_example"].append(tf_round(batches, features, args.reps, n))
        for k, v in rust_round(args.rust, args.file, args.spec, args.batch, args.reps).items():
            rows.setdefault(k, []).append(v)
    print(f"{'measure':<18} {'ns/record (median)':>20} {'TF / this (median of rounds)':>30}")
    tf_times = rows["tf_parse_example"]
    result = {}
    for k, v in rows.items():
        if not v:
            continue
        ratios = [t / x for t, x in zip(tf_times, v)]
        result[k] = {"ns_per_record": statistics.median(v), "tf_ratio": statistics.median(ratios)}
        print(f"{k:<18} {statistics.median(v):>20.1f} {statistics.median(ratios):>30.2f}")
    if "decode_1" in rows and "decode_2" in rows:
        scale = statistics.median([a / b for a, b in zip(rows["decode_1"], rows["decode_2"])])
        print(f"2 threads / 1 thread speed-up (median of rounds): {scale:.2f}x")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
