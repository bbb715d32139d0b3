"""Python-level loader benchmarks: recordwire against the `tfrecord` package
(vahidk, with its index), tf.data + parse_example, and ArrayRecord + Grain,
on the same records, in one run; medians of several rounds, and ratios.

    cargo run --release --example gen_corpus -- /tmp/corpus
    python python/benches/epoch.py /tmp/corpus [--rounds 5] [--only bert]

Measures, per corpus (bert: 20 000 BERT-like records; image: 200 records of
~100 KB JPEG-like bytes):
- a shuffled epoch decoded into numpy batches of 256, records/s, CRCs on
  (recordwire decode with 1 and 2 decoder threads; recordwire through a torch
  DataLoader with 2 workers; tfrecord package; tf.data shuffle+batch+
  parse_example; Grain MapDataset over ArrayRecord, parsing with protobuf);
- random access latency p50/p99: ds.raw(i), ds[i], ArrayRecord's
  reader.read([i]) and Grain's ArrayRecordDataSource[i];
- the floor: plain Python slicing the mapped file (offsets known), no look at
  the bytes.
Versions are printed at the top (python/benches/README.md keeps a run).
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import recordwire

BATCH = 256
REPO = Path(__file__).resolve().parents[2]


def spec_of(corpus: str) -> dict:
    return json.loads((REPO / "benches" / "specs" / f"{corpus}.json").read_text())


def tf_features(spec: dict):
    import tensorflow as tf

    kinds = {"int64": tf.int64, "float32": tf.float32, "bytes": tf.string}
    out = {}
    for name, f in spec["features"].items():
        if f["form"] == "fixed_len":
            out[name] = tf.io.FixedLenFeature(f["shape"], kinds[f["dtype"]])
        else:
            out[name] = tf.io.VarLenFeature(kinds[f["dtype"]])
    return out


def timed(fn, rounds: int):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        n = fn()
        times.append(time.perf_counter() - t)
    return n, statistics.median(times)


# ---- epochs -------------------------------------------------------------

def rw_epoch(path: str, spec: dict, threads: int):
    ds = recordwire.Dataset(path)
    sp = recordwire.Spec(spec)
    state = {"epoch": 0}

    def run():
        ids = ds.order(mode="shuffle", seed=1, epoch=state["epoch"])
        state["epoch"] += 1
        n = 0
        for a in range(0, len(ids), BATCH):
            batch = ds.decode(ids[a : a + BATCH], sp, threads=threads)
            n += len(next(iter(batch.values())))
        return n

    return run


def rw_torch_epoch(path: str, spec: dict, workers: int):
    import torch
    import recordwire.torch as rwt
    from torch.utils.data import DataLoader

    data = rwt.IterableDataset(path, spec=recordwire.Spec(spec).to_json(), batch_size=BATCH, seed=1)
    loader = DataLoader(data, batch_size=None, num_workers=workers, persistent_workers=workers > 0)
    state = {"epoch": 0}

    def run():
        data.set_epoch(state["epoch"])
        state["epoch"] += 1
        n = 0
        for batch in loader:
            n += len(next(iter(batch.values())))
        return n

    return run


def tfrecord_pkg_epoch(path: str, spec: dict):
    from tfrecord.reader import tfrecord_loader
    from tfrecord.tools.tfrecord2idx import create_index

    index = path + ".tfrecord-idx"
    if not os.path.exists(index):
        create_index(path, index)
    kinds = {"int64": "int", "float32": "float", "bytes": "byte"}
    description = {n: kinds[f["dtype"]] for n, f in spec["features"].items()}
    from tfrecord.torch.dataset import TFRecordDataset

    def run():
        # Its shuffle is a queue over the index's record order.
        ds = TFRecordDataset(path, index, description, shuffle_queue_size=BATCH * 4)
        n = 0
        batch = []
        for rec in ds:
            batch.append(rec)
            if len(batch) == BATCH:
                {k: np.stack([r[k] for r in batch]) for k in description if description[k] != "byte"}
                n += len(batch)
                batch = []
        return n + len(batch)

    return run


def tf_data_epoch(path: str, spec: dict, autotune: bool = False):
    """tf.data's shuffle + batch + parse_example; ``autotune``: the map's
    parallelism and a prefetch chosen by tf.data (else one map call at a
    time, no prefetch)."""
    import tensorflow as tf

    feats = tf_features(spec)
    n_total = len(recordwire.Dataset(path))
    count_key = next(n for n, f in spec["features"].items() if f["form"] == "fixed_len" and f["dtype"] != "bytes")

    # Built once (its map function is traced once, ~1 s), reshuffled each epoch.
    calls = tf.data.AUTOTUNE if autotune else 1
    ds = (
        tf.data.TFRecordDataset(path)
        .shuffle(n_total, seed=1, reshuffle_each_iteration=True)
        .batch(BATCH)
        .map(lambda x: tf.io.parse_example(x, feats), num_parallel_calls=calls)
    )
    if autotune:
        ds = ds.prefetch(tf.data.AUTOTUNE)

    def numpy(t):
        # (as_numpy_iterator takes ~1 s per batch holding SparseTensors: the
        # tensors are converted one by one instead.)
        if isinstance(t, tf.SparseTensor):
            return t.indices.numpy(), t.values.numpy(), t.dense_shape.numpy()
        return t.numpy()

    def run():
        n = 0
        for batch in ds:
            batch = {k: numpy(v) for k, v in batch.items()}
            n += len(batch[count_key])
        return n

    return run


def arrayrecord_file(path: str) -> str:
    from array_record.python.array_record_module import ArrayRecordWriter

    out = path + ".array_record"
    if not os.path.exists(out):
        ds = recordwire.Dataset(path)
        w = ArrayRecordWriter(out, "group_size:1")
        for i in range(len(ds)):
            w.write(bytes(ds.raw(i)))
        w.close()
    return out


def grain_epoch(path: str, spec: dict):
    import grain
    from array_record.python.array_record_data_source import ArrayRecordDataSource
    from tensorflow.core.example import example_pb2

    ar = arrayrecord_file(path)
    src = ArrayRecordDataSource([ar])
    names = list(spec["features"])
    dtypes = {"int64": np.int64, "float32": np.float32}
    # Rows are counted on a numeric fixed_len feature (Grain batches lists oddly).
    count_key = next(n for n, f in spec["features"].items() if f["dtype"] != "bytes" and f["form"] == "fixed_len")

    def parse(b: bytes):
        ex = example_pb2.Example.FromString(b)
        out = {}
        for n in names:
            f = ex.features.feature[n]
            kind = f.WhichOneof("kind")
            vals = getattr(f, kind).value
            d = spec["features"][n]["dtype"]
            out[n] = list(vals) if d == "bytes" else np.asarray(vals, dtype=dtypes[d])
        return out

    state = {"epoch": 0}

    def run():
        ds = grain.MapDataset.source(src).shuffle(seed=state["epoch"]).map(parse).batch(BATCH, drop_remainder=False)
        state["epoch"] += 1
        n = 0
        for i in range(len(ds)):
            b = ds[i]
            n += len(b[count_key])
        return n

    return run


# ---- random access ------------------------------------------------------

def latencies(fn, ids) -> tuple:
    out = np.empty(len(ids))
    for k, i in enumerate(ids):
        t = time.perf_counter_ns()
        fn(i)
        out[k] = time.perf_counter_ns() - t
    return float(np.percentile(out, 50)) / 1000, float(np.percentile(out, 99)) / 1000


def random_access(path: str, n: int) -> dict:
    from array_record.python.array_record_data_source import ArrayRecordDataSource
    from array_record.python.array_record_module import ArrayRecordReader

    ds = recordwire.Dataset(path)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, len(ds), n).tolist()
    ar = arrayrecord_file(path)
    reader = ArrayRecordReader(ar)
    src = ArrayRecordDataSource([ar])
    # The floor: slicing the mapped file with known offsets.
    f = open(path, "rb")
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    mv = memoryview(m)
    spans = []
    for i in range(len(ds)):
        r = ds.raw(i)
        start = np.frombuffer(r, np.uint8).ctypes.data if len(r) else 0
        spans.append((start, len(r)))
    base = spans[0][0] - 12
    spans = [(s - base, l) for s, l in spans]
    out = {
        "ds.raw(i)": latencies(ds.raw, ids),
        "ds[i]": latencies(ds.__getitem__, ids),
        "ArrayRecord reader.read([i])": latencies(lambda i: reader.read([i]), ids),
        "Grain ArrayRecordDataSource[i]": latencies(src.__getitem__, ids),
        "mmap slice (floor)": latencies(lambda i: mv[spans[i][0] : spans[i][0] + spans[i][1]], ids),
    }
    reader.close()
    return out


def versions() -> dict:
    import importlib.metadata as md

    out = {"python": sys.version.split()[0]}
    for p in ("recordwire", "numpy", "tensorflow-cpu", "torch", "tfrecord", "grain", "array-record"):
        try:
            out[p] = md.version(p)
        except md.PackageNotFoundError:
            out[p] = "-"
    return out


PEERS = {
    "recordwire decode, 1 thread": lambda p, s: rw_epoch(p, s, 1),
    "recordwire decode, 2 threads": lambda p, s: rw_epoch(p, s, 2),
    "recordwire torch DataLoader, 2 workers": lambda p, s: rw_torch_epoch(p, s, 2),
    "tfrecord package (its index, shuffle queue)": tfrecord_pkg_epoch,
    "tf.data shuffle + batch + parse_example": tf_data_epoch,
    "Grain MapDataset over ArrayRecord + protobuf": grain_epoch,
}


def run_peer(name: str, path: str, corpus: str, rounds: int) -> None:
    """One peer's epoch rate, in this process (each peer runs in its own: the
    `tfrecord` package and TensorFlow register the same protobuf names)."""
    fn = PEERS[name](path, spec_of(corpus))
    n = len(recordwire.Dataset(path))
    fn()  # warm: caches, pools, workers
    count, t = timed(fn, rounds)
    assert count == n, (name, count, n)
    print(json.dumps({"rate": n / t}))


def peer_rate(name: str, path: str, corpus: str, rounds: int) -> float:
    import subprocess

    out = subprocess.run(
        [sys.executable, __file__, "--peer", name, "--path", path, "--corpus", corpus, "--rounds", str(rounds)],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])["rate"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus_dir", nargs="?")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", choices=["bert", "image"])
    ap.add_argument("--access", type=int, default=20000, help="random reads per latency measure")
    ap.add_argument("--peer", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peer:
        run_peer(args.peer, args.path, args.corpus, args.rounds)
        return
    print("versions:", json.dumps(versions()))
    print(f"cores: {os.cpu_count()}, rounds: {args.rounds} (medians), each peer in its own process")
    for corpus in ("bert", "image"):
        if args.only and corpus != args.only:
            continue
        path = str(Path(args.corpus_dir) / f"{corpus}.tfrecord")
        n = len(recordwire.Dataset(path))
        arrayrecord_file(path)
        print(f"\n## {corpus}: {path}, {n} records, {os.path.getsize(path) / 1e6:.1f} MB")
        rates = {name: peer_rate(name, path, corpus, args.rounds) for name in PEERS}
        base = rates["recordwire decode, 1 thread"]
        print("| shuffled epoch into numpy batches of 256 | records/s (median) | recordwire 1 thread / this |")
        print("|---|---:|---:|")
        for name, r in rates.items():
            print(f"| {name} | {r:,.0f} | {base / r:.2f}× |")
        lat = random_access(path, args.access)
        print("\n| random access | p50 µs | p99 µs |")
        print("|---|---:|---:|")
        for name, (p50, p99) in lat.items():
            print(f"| {name} | {p50:.2f} | {p99:.2f} |")


if __name__ == "__main__":
    main()
