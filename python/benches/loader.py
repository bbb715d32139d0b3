"""The in-process loader (issue 28) against a bare decode loop and the
loaders people use, on the same files, in one run: each peer in its own
process, a warm-up epoch, then the median of several; ratios printed.

    cargo run --release --example gen_corpus -- /tmp/corpus
    python python/benches/loader.py /tmp/corpus [--rounds 5] [--only bert,ctr]

Per corpus (bert, ctr, image; specs in benches/specs/), a shuffled epoch in
batches of 256, records/s:
- recordwire: a bare ``ds.decode`` loop (1 thread); ``Loader`` with 1 and 2
  threads; ``recordwire.torch.Loader`` (2 threads); our ``IterableDataset``
  under ``DataLoader`` with 0 and 2 workers;
- peers: the ``tfrecord`` package's torch dataset (its index, a shuffle
  queue), ``tf.data`` shuffle + batch + ``parse_example`` with AUTOTUNE
  map and prefetch, SPDL (``spdl.pipeline``, 2 threads) driving
  ``ds.decode``, Grain's ``DataLoader`` over our ``DataSource`` (records,
  no batching: Grain's model);
- a training step that holds the GIL (a Python loop of 1 ms and 5 ms per
  batch) behind ``Loader`` with 2 threads: the fraction of the epoch spent
  waiting for data.

Then a JPEG corpus (2 000 records of 160x160 JPEGs written here with Pillow)
decoded by a transform (``PIL.Image.open(...).convert("RGB")`` into one
array per batch): ``Loader(transform=..., transform_threads=2)`` against
``DataLoader`` with 2 workers running the same transform over our
``IterableDataset``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import epoch as peers  # noqa: E402  (the peers' epochs, shared with epoch.py)

import recordwire  # noqa: E402

BATCH = 256


def count_rows(batch) -> int:
    if hasattr(batch, "ids"):
        return len(batch.ids)
    return len(next(iter(batch.values())))


def loader_epoch(path: str, spec: dict, threads: int, torch: bool = False, step_ms: float = 0.0):
    if torch:
        import recordwire.torch as rwt

        loader = rwt.Loader(path, recordwire.Spec(spec), BATCH, seed=1, threads=threads)
    else:
        loader = recordwire.Loader(path, recordwire.Spec(spec), BATCH, seed=1, threads=threads)
    waits, blocked = [], []

    def run():
        n, waited = 0, 0.0
        it = iter(loader)
        before = loader.waited()
        t0 = time.perf_counter()
        while True:
            w = time.perf_counter()
            batch = next(it, None)
            waited += time.perf_counter() - w
            if batch is None:
                break
            n += count_rows(batch)
            if step_ms:
                end = time.perf_counter() + step_ms / 1000
                while time.perf_counter() < end:  # a step that holds the GIL
                    pass
        total = time.perf_counter() - t0
        waits.append(waited / total)
        blocked.append((loader.waited() - before) / total)
        return n

    run.waits = waits  # type: ignore[attr-defined]
    run.blocked = blocked  # type: ignore[attr-defined]
    return run


def spdl_epoch(path: str, spec: dict, threads: int = 2):
    from spdl.pipeline import PipelineBuilder

    ds = recordwire.Dataset(path)
    sp = recordwire.Spec(spec)
    state = {"epoch": 0}

    def run():
        ids = ds.order(mode="shuffle", seed=1, epoch=state["epoch"])
        state["epoch"] += 1
        chunks = [ids[a : a + BATCH] for a in range(0, len(ids), BATCH)]
        pipeline = (
            PipelineBuilder()
            .add_source(chunks)
            .pipe(lambda c: ds.decode(c, sp), concurrency=threads, output_order="input")
            .add_sink(4)
            .build(num_threads=threads)
        )
        n = 0
        with pipeline.auto_stop():
            for batch in pipeline:
                n += count_rows(batch)
        return n

    return run


def grain_loader_epoch(path: str, spec: dict):
    import grain

    from recordwire.grain import DataSource

    src = DataSource(path)
    state = {"epoch": 0}

    def run():
        sampler = grain.samplers.IndexSampler(len(src), shuffle=True, seed=state["epoch"], num_epochs=1)
        state["epoch"] += 1
        loader = grain.DataLoader(data_source=src, sampler=sampler, worker_count=0)
        return sum(1 for _ in loader)

    return run


# ---- JPEG ------------------------------------------------------------------

JPEGS = 2000


def jpeg_file(directory: str) -> str:
    from PIL import Image

    path = os.path.join(directory, "jpeg.tfrecord")
    if os.path.exists(path):
        return path
    rng = np.random.default_rng(0)
    with recordwire.Writer(path) as w:
        for i in range(JPEGS):
            # A smooth image with noise: JPEG-compressible, like a photo.
            x = np.linspace(0, 255, 160, dtype=np.float32)
            img = (x[None, :, None] * 0.5 + x[:, None, None] * 0.3 + rng.normal(0, 20, (160, 160, 3))).clip(0, 255)
            buf = io.BytesIO()
            Image.fromarray(img.astype(np.uint8)).save(buf, format="JPEG", quality=90)
            w.write({"image": buf.getvalue(), "label": i % 1000})
    return path


JPEG_SPEC = {
    "payload": "example",
    "features": {
        "image": {"form": "fixed_len", "dtype": "bytes", "shape": [], "borrow": True},
        "label": {"form": "fixed_len", "dtype": "int64", "shape": []},
    },
}


def decode_jpegs(batch):
    """The transform: every image of the batch decoded into one uint8 array."""
    from PIL import Image

    images = batch["image"]
    values = images if isinstance(images, list) else images.to_list()
    out = np.empty((len(values), 160, 160, 3), dtype=np.uint8)
    for k, v in enumerate(values):
        with Image.open(io.BytesIO(v)) as im:
            out[k] = np.asarray(im.convert("RGB"))
    return {"image": out, "label": batch["label"]}


def jpeg_loader_epoch(path: str, threads: int):
    loader = recordwire.Loader(path, recordwire.Spec(JPEG_SPEC), BATCH, seed=1, threads=1, transform=decode_jpegs, transform_threads=threads)

    def run():
        return sum(len(b["label"]) for b in loader)

    return run


def jpeg_dataloader_epoch(path: str, workers: int):
    import recordwire.torch as rwt
    from torch.utils.data import DataLoader, IterableDataset

    class Decoded(IterableDataset):
        def __init__(self):
            self.inner = rwt.IterableDataset(path, spec=recordwire.Spec(JPEG_SPEC).to_json(), batch_size=BATCH, seed=1)

        def __iter__(self):
            for b in self.inner:
                yield decode_jpegs({"image": b["image"], "label": b["label"].numpy()})

    loader = DataLoader(Decoded(), batch_size=None, num_workers=workers, persistent_workers=workers > 0)

    def run():
        return sum(len(b["label"]) for b in loader)

    return run


PEERS = {
    "decode loop, 1 thread": lambda p, s: peers.rw_epoch(p, s, 1),
    "Loader, 1 thread": lambda p, s: loader_epoch(p, s, 1),
    "Loader, 2 threads": lambda p, s: loader_epoch(p, s, 2),
    "torch.Loader, 2 threads": lambda p, s: loader_epoch(p, s, 2, torch=True),
    "IterableDataset, DataLoader 0 workers": lambda p, s: peers.rw_torch_epoch(p, s, 0),
    "IterableDataset, DataLoader 2 workers": lambda p, s: peers.rw_torch_epoch(p, s, 2),
    "tfrecord package": peers.tfrecord_pkg_epoch,
    "tf.data AUTOTUNE": lambda p, s: peers.tf_data_epoch(p, s, autotune=True),
    "SPDL driving ds.decode, 2 threads": spdl_epoch,
    "Grain DataLoader over DataSource": grain_loader_epoch,
    "Loader 2 threads, 1 ms GIL step": lambda p, s: loader_epoch(p, s, 2, step_ms=1),
    "Loader 2 threads, 5 ms GIL step": lambda p, s: loader_epoch(p, s, 2, step_ms=5),
}
JPEG_PEERS = {
    "JPEG: Loader + transform, 2 transform threads": lambda p: jpeg_loader_epoch(p, 2),
    "JPEG: DataLoader 2 workers, same transform": lambda p: jpeg_dataloader_epoch(p, 2),
}


def run_peer(name: str, path: str, corpus: str, rounds: int) -> None:
    if name in JPEG_PEERS:
        fn = JPEG_PEERS[name](path)
        n = JPEGS
    else:
        fn = PEERS[name](path, peers.spec_of(corpus))
        n = len(recordwire.Dataset(path))
    fn()  # warm
    count, t = peers.timed(fn, rounds)
    assert count == n, (name, count, n)
    waits, blocked = getattr(fn, "waits", []), getattr(fn, "blocked", [])
    median = lambda v: statistics.median(v[1:]) if len(v) > 1 else None  # noqa: E731
    print(json.dumps({"rate": n / t, "wait": median(waits), "blocked": median(blocked)}))


def peer(name: str, path: str, corpus: str, rounds: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--peer", name, "--path", path, "--corpus", corpus, "--rounds", str(rounds)],
        capture_output=True, text=True, timeout=1800,
    )
    if out.returncode != 0:
        return {"rate": float("nan"), "error": out.stderr.strip().splitlines()[-1:] or ["?"]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus_dir", nargs="?", default="/tmp/corpus")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="bert,ctr,image,jpeg")
    ap.add_argument("--peer", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peer:
        run_peer(args.peer, args.path, args.corpus, args.rounds)
        return
    import importlib.metadata as md

    v = peers.versions()
    for p in ("spdl", "pillow"):
        try:
            v[p] = md.version(p)
        except md.PackageNotFoundError:
            v[p] = "-"
    print("versions:", json.dumps(v))
    print(f"cores: {os.cpu_count()}, rounds: {args.rounds} (medians), each peer in its own process, batches of {BATCH}")
    wanted = args.only.split(",")
    for corpus in [c for c in ("bert", "ctr", "image") if c in wanted]:
        path = os.path.join(args.corpus_dir, f"{corpus}.tfrecord")
        print(f"\n## {corpus} ({len(recordwire.Dataset(path))} records)")
        rates = {}
        for name in PEERS:
            r = peer(name, path, corpus, args.rounds)
            rates[name] = r["rate"]
            extra = ""
            if r.get("wait") is not None and "GIL" in name:
                extra = (
                    f", in next() {100 * r['wait']:.1f}% of the epoch, "
                    f"blocked on a batch not made yet {100 * r['blocked']:.1f}%"
                )
            err = f"  FAILED: {r['error']}" if "error" in r else ""
            print(f"{name:45s} {r['rate']:>12,.0f} records/s{extra}{err}", flush=True)
        base, l1, l2 = rates["decode loop, 1 thread"], rates["Loader, 1 thread"], rates["Loader, 2 threads"]
        print(f"Loader 1 thread / decode loop: {l1 / base:.2f}x; Loader 2 threads / 1 thread: {l2 / l1:.2f}x")
        print(f"Loader 2 threads / DataLoader 2 workers: {l2 / rates['IterableDataset, DataLoader 2 workers']:.2f}x")
        for name in ("tfrecord package", "tf.data AUTOTUNE", "SPDL driving ds.decode, 2 threads", "Grain DataLoader over DataSource"):
            print(f"Loader 2 threads / {name}: {l2 / rates[name]:.2f}x")
    if "jpeg" in wanted:
        path = jpeg_file(args.corpus_dir)
        print(f"\n## JPEG ({JPEGS} records of 160x160 JPEG, decoded by a transform)")
        rates = {}
        for name in JPEG_PEERS:
            r = peer(name, path, "jpeg", args.rounds)
            rates[name] = r["rate"]
            err = f"  FAILED: {r['error']}" if "error" in r else ""
            print(f"{name:45s} {r['rate']:>12,.0f} records/s{err}", flush=True)
        a, b = rates.values()
        print(f"Loader + transform / DataLoader 2 workers: {a / b:.2f}x")


if __name__ == "__main__":
    main()
