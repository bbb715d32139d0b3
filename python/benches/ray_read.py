"""Ray Data reads and writes of record files, in one run on a two-node
local cluster (``ray.cluster_utils.Cluster``, one CPU per node, both on this
machine): rows/s of a full read into Arrow (``materialize()``) for
``recordwire.ray.read_records`` (local files, and the same file from moto's
S3 server on 127.0.0.1) against ``ray.data.read_tfrecords`` (its default
path: frames read in Python, each record parsed with ``tf.train.Example``)
and against recordwire's in-process ``ds.decode(..., to="arrow")`` on the
same two cores (``threads=2``); and rows/s of writing the read dataset back
with ``recordwire.ray.write_records`` against ``ds.write_tfrecords``.

    cargo run --release --example gen_corpus -- /tmp/corpus
    python python/benches/ray_read.py /tmp/corpus/bert.tfrecord:benches/specs/bert.json \\
        /tmp/corpus/ctr.tfrecord:benches/specs/ctr.json [--rounds 3] [--ray-rows 2000]

``read_tfrecords`` reads about 440 rows/s here, so it reads the first
``--ray-rows`` records (a file of them) and its rate is of those. Prints
medians and ratios.

``--blocks 0`` (the default) reads with ``read_records``'s default read
tasks (no ``override_num_blocks``: tasks sized by bytes); ``--blocks N``
asks for N. ``--make-bert FILE`` first writes a 20,000-row BERT-like shard
(the ``benches/specs/bert.json`` features, ~18.4 MB) without the Rust
corpus generator; ``--skip-s3`` and ``--skip-write`` leave those parts out
(a shorter run), e.g.

    python python/benches/ray_read.py --make-bert /tmp/bert.tfrecord \
        /tmp/bert.tfrecord:benches/specs/bert.json --repeat 10 --rounds 3 --skip-s3 --skip-write
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "tests"))

import ray  # noqa: E402
import ray.data  # noqa: E402

import recordwire  # noqa: E402
import recordwire.ray as rwray  # noqa: E402
from remote_servers import Moto  # noqa: E402


def timed(f, rounds):
    times = []
    out = None
    for _ in range(rounds):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def make_bert(path: str, rows: int = 20_000) -> None:
    """A BERT-like shard: 128 token ids, mask and segments, 20 masked
    positions, ids and weights, a label (the gen_corpus example's shape)."""
    import numpy as np

    rng = np.random.default_rng(0)
    with recordwire.Writer(path) as w:
        for i in range(rows):
            n = int(rng.integers(20, 128))
            ids = np.zeros(128, np.int64)
            ids[:n] = rng.integers(1000, 30000, n)
            w.write(
                {
                    "input_ids": ids,
                    "input_mask": (ids > 0).astype(np.int64),
                    "segment_ids": (np.arange(128) > n // 2).astype(np.int64),
                    "masked_lm_positions": rng.integers(0, 128, 20),
                    "masked_lm_ids": rng.integers(1000, 30000, 20),
                    "masked_lm_weights": np.ones(20, np.float32),
                    "next_sentence_labels": np.array([i % 2], np.int64),
                }
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpora", nargs="+", help="FILE:SPEC pairs")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ray-rows", type=int, default=2000)
    ap.add_argument("--blocks", type=int, default=0, help="read tasks asked for (0: read_records's default)")
    ap.add_argument("--make-bert", help="write a 20,000-row BERT-like shard here first")
    ap.add_argument("--skip-s3", action="store_true")
    ap.add_argument("--skip-write", action="store_true")
    ap.add_argument(
        "--repeat", type=int, default=1, help="read each file this many times over (one dataset of N copies)"
    )
    args = ap.parse_args()
    blocks = args.blocks or None
    if args.make_bert:
        make_bert(args.make_bert)

    from ray.cluster_utils import Cluster

    memory = 400 * 2**20
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": memory, "include_dashboard": False},
    )
    cluster.add_node(num_cpus=1, object_store_memory=memory)
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.wait_for_nodes()
    ray.data.DataContext.get_current().enable_progress_bars = False
    s3 = Moto()
    s3.bucket("bench")
    options = s3.options(tempfile.mkdtemp())
    print(f"recordwire {recordwire.__version__}, ray {ray.__version__}; two nodes of one CPU each")
    try:
        for pair in args.corpora:
            path, spec_path = pair.split(":")
            spec = recordwire.Spec(json.loads(Path(spec_path).read_text()))
            paths = [path] * args.repeat
            local = recordwire.Dataset(paths)
            n = len(local)
            if not args.skip_s3:
                s3.put("bench", Path(path).name, Path(path).read_bytes())
            url = f"s3://bench/{Path(path).name}"
            urls = [url] * args.repeat
            rows = {}

            def in_process():
                return sum(
                    local.decode(range(a, min(n, a + 4096)), spec, threads=2, to="arrow").num_rows
                    for a in range(0, n, 4096)
                )

            t, got = timed(in_process, args.rounds)
            assert got == n
            rows["in-process decode to Arrow (threads=2)"] = n / t
            t, got = timed(
                lambda: rwray.read_records(paths, spec=spec, override_num_blocks=blocks).materialize().count(),
                args.rounds,
            )
            assert got == n
            rows["read_records, local"] = n / t
            if not args.skip_s3:
                t, got = timed(
                    lambda: rwray.read_records(
                        urls, spec=spec, storage_options=options, override_num_blocks=blocks
                    ).materialize().count(),
                    args.rounds,
                )
                assert got == n
                rows["read_records, s3 (moto)"] = n / t
            # Ray's own reader, on the first --ray-rows records.
            head = Path(tempfile.mkdtemp()) / "head.tfrecord"
            with recordwire.Writer(head) as w:
                for i in range(min(n, args.ray_rows)):
                    w.write(bytes(local.raw(i)))
            try:
                t, got = timed(lambda: ray.data.read_tfrecords(str(head)).materialize().count(), 1)
                rows["ray.data.read_tfrecords (default path)"] = got / t
            except Exception as e:  # noqa: BLE001 - reported, not hidden
                print(f"  ray.data.read_tfrecords failed: {str(e).splitlines()[-1][:200]}")
            if not args.skip_write:
                # Writes: the dataset read above, written back.
                ds = rwray.read_records(paths, spec=spec, override_num_blocks=blocks).materialize()
                t, written = timed(lambda: rwray.write_records(ds, tempfile.mkdtemp()), args.rounds)
                assert written
                rows["write_records"] = n / t
                try:
                    small = ds.limit(min(n, args.ray_rows)).materialize()
                    t, _ = timed(lambda: small.write_tfrecords(tempfile.mkdtemp()), 1)
                    rows["ds.write_tfrecords"] = small.count() / t
                except Exception as e:  # noqa: BLE001
                    print(f"  ds.write_tfrecords failed: {str(e).splitlines()[-1][:200]}")
            size = args.repeat * Path(path).stat().st_size / 1e6
            print(f"\n{Path(path).name} x{args.repeat}: {n} records, {size:.1f} MB")
            base = rows["in-process decode to Arrow (threads=2)"]
            ray_read = rows.get("ray.data.read_tfrecords (default path)")
            for name, rate in rows.items():
                extra = f"{rate / base:6.2f}x in-process"
                if ray_read and name.startswith("read_records"):
                    extra += f", {rate / ray_read:8.1f}x read_tfrecords"
                if name == "write_records" and "ds.write_tfrecords" in rows:
                    extra += f", {rate / rows['ds.write_tfrecords']:8.1f}x write_tfrecords"
                print(f"  {name:42s} {rate:12,.0f} rows/s  {extra}")
    finally:
        s3.stop()
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
