"""Bytes fetched for one epoch of a default ``recordwire.Loader`` over a
remote object (issue 37, point 3): a 25.6 MB object of ~1.3 KB records on an
HTTP server on 127.0.0.1 that honours ``Range`` and counts the body bytes it
sends, read with the loader's defaults (``order`` not given) at batch sizes
64 and 256, then with ``order="shuffle"`` (a full shuffle) and with the
page-aware order over 8 MiB spans. Prints, per run, the bytes sent as a
multiple of the object, the requests, and the epoch's time.

    python python/benches/epoch_bytes.py [--records 20000] [--rounds 3]

Runs against whichever ``recordwire`` is imported (``PYTHONPATH`` picks a
build), so one script measures a before and an after build in turn.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "tests"))

import recordwire  # noqa: E402
from remote_servers import RangeServer  # noqa: E402


def write_object(path: Path, records: int) -> bytes:
    rng = np.random.default_rng(7)
    with recordwire.Writer(str(path)) as w:
        for i in range(records):
            w.write({"label": np.array([i], np.int64), "blob": [rng.bytes(int(rng.integers(800, 1800)))]})
    return path.read_bytes()


def epoch(server: RangeServer, url: str, options: dict, batch: int, **order) -> tuple:
    spec = {"label": recordwire.FixedLen((), "int64")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loader = recordwire.Loader(url, spec, batch_size=batch, storage_options=options, **order)
    server.reset()
    t = time.perf_counter()
    n = sum(len(b["label"]) for b in loader)
    return n, server.bytes_sent, server.requests, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    data = write_object(tmp / "epoch.tfrecord", args.records)
    server = RangeServer()
    server.objects["/b/epoch.tfrecord"] = data
    url = f"{server.base}/b/epoch.tfrecord"
    print(f"recordwire {recordwire.__version__} from {recordwire.__file__}")
    print(f"object: {len(data) / 1e6:.1f} MB, {args.records} records")
    runs = [
        ("default order, batch 64", 64, {}),
        ("default order, batch 256", 256, {}),
        ("order='shuffle', batch 64", 64, {"order": "shuffle"}),
        ("page-aware, 8 MiB pages, batch 64", 64, {"order": "page-aware", "page_size": 8 << 20}),
    ]
    for name, batch, order in runs:
        results = []
        for r in range(args.rounds):
            # A fresh cache folder each round: the sidecar index is built once
            # per round, outside the count (the loader's open reads it).
            options = {"allow_http": "true", "cache_dir": str(tmp / f"cache-{name[:7]}-{batch}-{r}")}
            try:
                results.append(epoch(server, url, options, batch, **order))
            except Exception as e:  # an older build may not take an argument
                print(f"{name:36s} failed: {type(e).__name__}: {e}")
                break
        if not results:
            continue
        n = results[0][0]
        sent = statistics.median(x[1] for x in results)
        requests = statistics.median(x[2] for x in results)
        secs = statistics.median(x[3] for x in results)
        print(
            f"{name:36s} {n} records, {sent / 1e6:9.1f} MB sent ({sent / len(data):6.2f}x the object), "
            f"{requests:7.0f} requests, {secs:6.2f} s (median of {len(results)})"
        )
    server.stop()


if __name__ == "__main__":
    main()
