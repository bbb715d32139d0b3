"""Speed of compressed shards: a span-aware shuffled epoch
(``order(mode="page-aware", page_size=0)``) decoded into numpy batches of 256
over a GZIP shard, against the same over the plain file; medians of several
rounds, records/s, and the ratio gz/plain (issue 24's target: >= 0.8).

    python python/benches/gz_epoch.py --bert 300 /tmp/gzbench      # makes the files
    python python/benches/gz_epoch.py PLAIN GZ [--spec SPEC.json]   # any pair

``--bert MB DIR`` writes about MB megabytes of BERT-like tf.Examples (random
tokens, the layout of benches/specs/bert.json) to DIR/bert.tfrecord and the
same gzip-compressed (level 6, TensorFlow's writer's level) to
DIR/bert.tfrecord.gz, then measures them. A pair given by path is measured
with the spec given, else with one made from the first record (every feature
var_len). Each round opens the datasets anew (the open, which builds the
checkpoint index of the compressed file, is timed apart) and decodes
``--epochs`` epochs; plain and gz rounds alternate.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import recordwire

BATCH = 256
REPO = Path(__file__).resolve().parents[2]


def make_bert(mb: int, out_dir: Path) -> tuple:
    out_dir.mkdir(parents=True, exist_ok=True)
    plain = out_dir / "bert.tfrecord"
    gz = out_dir / "bert.tfrecord.gz"
    if not (plain.exists() and gz.exists()):
        rng = np.random.default_rng(1)
        n = mb * (1 << 20) // 1000
        with recordwire.Writer(plain) as w:
            for _ in range(n):
                w.write(
                    {
                        "input_ids": rng.integers(0, 30522, 128, dtype=np.int64),
                        "input_mask": rng.integers(0, 2, 128, dtype=np.int64),
                        "segment_ids": rng.integers(0, 2, 128, dtype=np.int64),
                        "masked_lm_positions": rng.integers(0, 128, 20, dtype=np.int64),
                        "masked_lm_ids": rng.integers(0, 30522, 20, dtype=np.int64),
                        "masked_lm_weights": (np.arange(20) % 2).astype(np.float32),
                        "next_sentence_labels": rng.integers(0, 2, 1, dtype=np.int64),
                    }
                )
        with open(plain, "rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    spec = json.loads((REPO / "benches" / "specs" / "bert.json").read_text())
    return str(plain), str(gz), spec


def spec_from_first(path: str) -> dict:
    first = recordwire.Dataset(path)[0]
    features = {}
    for name, value in first.items():
        if isinstance(value, list):
            dtype = "bytes"
        elif value.dtype == np.float32:
            dtype = "float32"
        else:
            dtype = "int64"
        features[name] = {"form": "var_len", "dtype": dtype}
    return {"payload": "example", "features": features}


def order(ds, e: int):
    """The span-aware order; a plain file has no spans (page size 0 is
    refused there): its pages are 1 MiB, the default checkpoint spacing."""
    try:
        return ds.order(mode="page-aware", page_size=0, seed=1, epoch=e)
    except ValueError:
        return ds.order(mode="page-aware", page_size=1 << 20, seed=1, epoch=e)


def epoch(ds, spec, e: int) -> int:
    ids = order(ds, e)
    n = 0
    for a in range(0, len(ids), BATCH):
        chunk = ids[a : a + BATCH]
        batch = ds.decode(chunk, spec, threads=1)
        assert batch
        n += len(chunk)
    return n


def one_round(path: str, spec, epochs: int, r: int) -> tuple:
    t = time.perf_counter()
    ds = recordwire.Dataset(path)
    opened = time.perf_counter() - t
    t, c = time.perf_counter(), time.process_time()
    n = sum(epoch(ds, spec, r * epochs + e) for e in range(epochs))
    return n / (time.perf_counter() - t), n / (time.process_time() - c), opened


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("plain", nargs="?")
    ap.add_argument("gz", nargs="?")
    ap.add_argument("--bert", type=int, metavar="MB")
    ap.add_argument("--dir", default="/tmp/gzbench")
    ap.add_argument("--spec")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=1, help="epochs per round")
    args = ap.parse_args()
    if args.bert:
        plain, gz, spec = make_bert(args.bert, Path(args.dir))
    else:
        if not (args.plain and args.gz):
            ap.error("PLAIN GZ, or --bert MB")
        plain, gz = args.plain, args.gz
        spec = json.loads(Path(args.spec).read_text()) if args.spec else spec_from_first(plain)
    sp = recordwire.Spec(spec)
    n = len(recordwire.Dataset(plain))
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC; python {sys.version.split()[0]}, "
        f"numpy {np.__version__}; cpus {os.cpu_count()}; batch {BATCH}, 1 decode thread, CRCs on"
    )
    print(f"plain {plain}: {os.path.getsize(plain)} bytes, {n} records")
    print(f"gz    {gz}: {os.path.getsize(gz)} bytes")
    print(f"{args.rounds} rounds of {args.epochs} epoch(s), order(mode='page-aware', page_size=0) (plain: page_size=1 MiB)")
    # Wall-clock records/s, and records per second of this process's CPU
    # time (the decode runs on the calling thread: on a loaded machine the
    # CPU rate is the steadier one).
    rates = {"plain": [], "gz": []}
    cpu = {"plain": [], "gz": []}
    opens = {"plain": [], "gz": []}
    for r in range(args.rounds):
        for name, path in (("plain", plain), ("gz", gz)):
            rate, cpu_rate, opened = one_round(path, sp, args.epochs, r)
            rates[name].append(rate)
            cpu[name].append(cpu_rate)
            opens[name].append(opened)
            print(
                f"round {r} {name}: {rate:,.0f} records/s, {cpu_rate:,.0f} per CPU-second "
                f"(open {opened * 1000:.1f} ms)",
                flush=True,
            )
    med = {k: statistics.median(v) for k, v in rates.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    for k in ("plain", "gz"):
        print(
            f"{k}: median {med[k]:,.0f} records/s (min {min(rates[k]):,.0f}, max {max(rates[k]):,.0f}), "
            f"{med_cpu[k]:,.0f} per CPU-second; open median {statistics.median(opens[k]) * 1000:.1f} ms"
        )
    print(f"ratio gz/plain: {med['gz'] / med['plain']:.2f} wall, {med_cpu['gz'] / med_cpu['plain']:.2f} CPU")


if __name__ == "__main__":
    main()
