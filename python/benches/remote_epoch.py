"""A shuffled epoch over object storage: recordwire page-aware (span cache)
and full shuffle against the same epoch from local disk and against MosaicML
Streaming reading the same records from the same server, in one run.

    cargo run --release --example gen_corpus -- /tmp/corpus
    python python/benches/remote_epoch.py /tmp/corpus/bert.tfrecord \\
        [--latency-ms 20] [--rounds 3] [--mds-python /path/to/venv/bin/python]

The server is moto's S3 server on 127.0.0.1 (started here), behind a proxy
that adds ``--latency-ms`` to every request and counts requests and bytes.
recordwire decodes every record into numpy batches of 256 (the spec of
benches/specs/bert.json); MosaicML Streaming (``mosaicml-streaming``, run in
the interpreter ``--mds-python`` names, its own venv) iterates the raw bytes
of the same records written as MDS, shuffled, no decoding, downloading into
a fresh local cache each round (its first epoch). Prints medians and ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "tests"))

import recordwire  # noqa: E402
from remote_servers import Moto  # noqa: E402

BATCH = 256
# Batches whose spans are prefetched ahead (recordwire with a span cache).
AHEAD = 32


class LatencyProxy:
    """TCP proxy that waits ``latency`` before passing on each request (a
    client write after the server spoke, or the first), counting requests
    and the bytes the server sends."""

    def __init__(self, upstream: int, latency: float) -> None:
        self.upstream, self.latency = upstream, latency
        self.requests = 0
        self.bytes = 0
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(256)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def reset(self) -> None:
        with self.lock:
            self.requests = self.bytes = 0

    def _accept(self) -> None:
        while True:
            client, _ = self.sock.accept()
            server = socket.create_connection(("127.0.0.1", self.upstream))
            state = {"server_spoke": True}
            threading.Thread(target=self._pipe, args=(client, server, state, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, state, False), daemon=True).start()

    def _pipe(self, src, dst, state, upstream) -> None:
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                if upstream:
                    if state["server_spoke"]:
                        state["server_spoke"] = False
                        with self.lock:
                            self.requests += 1
                        time.sleep(self.latency)
                else:
                    state["server_spoke"] = True
                    with self.lock:
                        self.bytes += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def epoch(ds, spec, order_kwargs) -> tuple[float, float, int]:
    """One epoch decoded in batches: (seconds, seconds to the first batch, records)."""
    ids = ds.order(**order_kwargs)
    start = time.perf_counter()
    first = None
    n = 0
    ds.prefetch(ids[:BATCH])
    for at in range(0, len(ids), BATCH):
        batch = ds.decode(ids[at : at + BATCH], spec)
        # The spans of the next batches are fetched while the training step
        # (here: nothing) uses this one and the next are decoded.
        ds.prefetch(ids[at + BATCH : at + AHEAD * BATCH])
        n += len(next(iter(batch.values())))
        if first is None:
            first = time.perf_counter() - start
    return time.perf_counter() - start, first or 0.0, n


def loader_epoch(ds, spec, order_kwargs, readers: int) -> tuple[float, float, int]:
    """One epoch through ``recordwire.Loader`` (2 decode threads, ``readers``
    batches read at once): (seconds, seconds to the first batch, records)."""
    loader = recordwire.Loader(
        ds,
        spec,
        BATCH,
        order=order_kwargs["mode"],
        seed=order_kwargs["seed"],
        page_size=order_kwargs.get("page_size", 4096),
        window=order_kwargs.get("window", 8),
        threads=2,
        workers=readers,
        prefetch=readers,
    )
    start = time.perf_counter()
    first = None
    n = 0
    for batch in loader:
        n += len(batch.ids)
        if first is None:
            first = time.perf_counter() - start
    return time.perf_counter() - start, first or 0.0, n


MDS_SCRIPT = r"""
import os, sys, time, json, tempfile, shutil
from streaming import MDSWriter, StreamingDataset
records_file, remote, write = sys.argv[1], sys.argv[2], sys.argv[3] == "write"
if write:
    # The raw records of the TFRecord file (framing parsed here, CRCs not checked).
    import struct
    out = tempfile.mkdtemp()
    with open(records_file, "rb") as f, MDSWriter(out=out, columns={"record": "bytes"}, size_limit=1 << 26) as w:
        while True:
            head = f.read(12)
            if len(head) < 12:
                break
            (n,) = struct.unpack("<Q", head[:8])
            w.write({"record": f.read(n)})
            f.read(4)
    print(json.dumps({"dir": out}))
    sys.exit(0)
local = tempfile.mkdtemp()
t = time.perf_counter()
ds = StreamingDataset(remote=remote, local=local, shuffle=True, shuffle_seed=1, batch_size=256)
first = None
n = 0
for sample in ds:
    n += 1
    if first is None:
        first = time.perf_counter() - t
print(json.dumps({"seconds": time.perf_counter() - t, "first": first, "records": n}))
shutil.rmtree(local, ignore_errors=True)
"""


def mds(python: str, records: Path, s3: Moto, endpoint: str, rounds: int) -> dict:
    env = {
        **os.environ,
        "S3_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    out = subprocess.run([python, "-c", MDS_SCRIPT, str(records), "", "write"], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    folder = Path(json.loads(out.stdout.strip().splitlines()[-1])["dir"])
    s3.bucket("mds")
    for f in sorted(folder.iterdir()):
        s3.put("mds", f"bert/{f.name}", f.read_bytes())
    runs = []
    for _ in range(rounds):
        out = subprocess.run(
            [python, "-c", MDS_SCRIPT, str(records), "s3://mds/bert", "read"], capture_output=True, text=True, env=env
        )
        if out.returncode != 0:
            raise RuntimeError(out.stderr[-2000:])
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {
        "rate": statistics.median(r["records"] / r["seconds"] for r in runs),
        "first": statistics.median(r["first"] for r in runs),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("records", type=Path)
    ap.add_argument("--spec", default=str(REPO / "benches" / "specs" / "bert.json"))
    ap.add_argument("--latency-ms", type=float, default=20.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--span-mib", type=int, default=1)
    ap.add_argument("--mds-python")
    ap.add_argument("--loader-only", action="store_true", help="only the quasi-random rows and the Loader's")
    args = ap.parse_args()

    spec = recordwire.Spec(json.loads(Path(args.spec).read_text()))
    s3 = Moto()
    try:
        s3.bucket("bench")
        data = args.records.read_bytes()
        s3.put("bench", args.records.name, data, public=True)
        proxy = LatencyProxy(s3.port, args.latency_ms / 1000)
        endpoint = f"http://127.0.0.1:{proxy.port}"
        cache = tempfile.mkdtemp()
        base = {**s3.options(cache), "aws_endpoint": endpoint}
        span = args.span_mib << 20
        url = f"s3://bench/{args.records.name}"
        print(f"recordwire {recordwire.__version__}; {len(data) / 1e6:.1f} MB, latency {args.latency_ms} ms/request")
        local = recordwire.Dataset(str(args.records))
        n = len(local)
        rows = {}
        shuffle = dict(mode="shuffle", seed=1)
        quasi = dict(mode="quasi-random", page_size=span, window=4, seed=1)
        spanned = {**base, "span_size": str(span), "span_cache": str(24 * span)}
        setups = [
            ("local disk, shuffle", lambda: local, shuffle),
            ("local disk, quasi-random", lambda: local, quasi),
            ("s3, quasi-random + span cache", lambda: recordwire.Dataset(url, storage_options=spanned), quasi),
            ("s3, quasi-random + span cache, Loader (8 readers)", lambda: recordwire.Dataset(url, storage_options=spanned), quasi),
            ("s3, quasi-random + span cache, Loader (32 readers)", lambda: recordwire.Dataset(url, storage_options=spanned), quasi),
            ("s3, full shuffle", lambda: recordwire.Dataset(url, storage_options=base), shuffle),
            (
                "s3, full shuffle, coalesce_gap=0",
                lambda: recordwire.Dataset(url, storage_options={**base, "coalesce_gap": "0"}),
                shuffle,
            ),
        ]
        if args.loader_only:
            setups = [x for x in setups if "quasi" in x[0]]
        for name, open_ds, order in setups:
            times, firsts, reqs, nbytes = [], [], [], []
            # One request per record is slow on purpose: one round of it.
            for _ in range(1 if "coalesce_gap=0" in name else args.rounds):
                ds = open_ds()  # a fresh dataset: a cold span cache
                proxy.reset()
                if "Loader" in name:
                    readers = int(name.split("(")[1].split()[0])
                    seconds, first, count = loader_epoch(ds, spec, order, readers)
                else:
                    seconds, first, count = epoch(ds, spec, order)
                assert count == n, (name, count, n)
                times.append(seconds)
                firsts.append(first)
                reqs.append(proxy.requests)
                nbytes.append(proxy.bytes)
            rows[name] = {
                "rate": n / statistics.median(times),
                "first": statistics.median(firsts),
                "requests": statistics.median(reqs),
                "bytes": statistics.median(nbytes),
            }
        # get(i) latency: p50 of ds.raw(i) (index loaded) against one bare
        # ranged GET of the same bytes through the same proxy (one round trip).
        import random
        import urllib.request

        ds = recordwire.Dataset(url, storage_options=base)
        rng = random.Random(3)
        picks = [rng.randrange(n) for _ in range(200)]
        got, bare = [], []
        for i in picks:
            t = time.perf_counter()
            ds.raw(i)
            got.append(time.perf_counter() - t)
        offsets = [rng.randrange(len(data) - 4096) for _ in range(200)]
        for o in offsets:
            req = urllib.request.Request(
                f"{endpoint}/bench/{args.records.name}", headers={"Range": f"bytes={o}-{o + 999}"}
            )
            t = time.perf_counter()
            with urllib.request.urlopen(req) as r:
                r.read()
            bare.append(time.perf_counter() - t)
        get_p50, bare_p50 = statistics.median(got), statistics.median(bare)
        # The server's floor: the whole object in one bare GET through the proxy.
        whole = []
        for _ in range(args.rounds):
            t = time.perf_counter()
            with urllib.request.urlopen(f"{endpoint}/bench/{args.records.name}") as r:
                r.read()
            whole.append(time.perf_counter() - t)
        floor = len(data) / statistics.median(whole)
        if args.mds_python:
            rows["MosaicML Streaming, shuffled first epoch (raw bytes)"] = mds(
                args.mds_python, args.records, s3, endpoint, args.rounds
            )
        local_rate = rows["local disk, quasi-random"]["rate"]
        print(f"{'setup':<56} {'records/s':>10} {'vs local':>9} {'first batch':>12} {'requests':>9} {'MB fetched':>11}")
        for name, r in rows.items():
            req = f"{r['requests']:.0f}" if "requests" in r else "-"
            mb = f"{r['bytes'] / 1e6:.1f}" if "bytes" in r else "-"
            print(
                f"{name:<56} {r['rate']:>10.0f} {r['rate'] / local_rate:>8.2f}x {r['first'] * 1000:>10.0f}ms {req:>9} {mb:>11}"
            )
        print(
            f"the server's floor: one GET of the whole object, {floor / 1e6:.0f} MB/s "
            f"({n * floor / len(data):.0f} records/s if nothing but the transfer took time)"
        )
        print(
            f"get(i) p50 over s3: {get_p50 * 1000:.1f} ms; one bare ranged GET through the same proxy: "
            f"{bare_p50 * 1000:.1f} ms ({get_p50 / bare_p50:.2f}x)"
        )
        if args.mds_python:
            m = rows["MosaicML Streaming, shuffled first epoch (raw bytes)"]["rate"]
            q = rows["s3, quasi-random + span cache"]["rate"]
            print(f"recordwire quasi-random over s3 (decoded) / MosaicML first epoch (raw): {q / m:.1f}x")
    finally:
        s3.stop()


if __name__ == "__main__":
    main()
