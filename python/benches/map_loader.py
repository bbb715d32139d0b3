"""Records/s of ``recordwire.torch.MapDataset`` through a ``DataLoader``
(batch_size=256, num_workers=0, shuffled), on real files (issue 25, point 5).

    PYTHONPATH=<build>/python python python/benches/map_loader.py LABEL [DIR]

DIR holds the files (default /work/shared/realworld/files): the TFX MNIST
file (fixed_len 784 floats; torch's default collate) and the lingvo WMT
train shard (var_len token ids; ``recordwire.torch.collate``, padded and
nested, where the build has it). Each line: the best of 10 epochs; every
epoch asserts it saw each record once, so a loader that stops working fails
instead of getting faster. ``per-item`` rows hide ``__getitems__`` (the
DataLoader then calls ``ds[i]`` 256 times per batch): one decode per record,
as before it existed.
"""
import functools
import os
import sys
import time

import torch
from torch.utils.data import DataLoader

import recordwire
import recordwire.torch as rwt

LABEL = sys.argv[1] if len(sys.argv) > 1 else "run"
DIR = sys.argv[2] if len(sys.argv) > 2 else "/work/shared/realworld/files"
MNIST = os.path.join(DIR, "tensorflow_tfx__tfx__examples__mnist__data__mnist.tfrecord")
WMT = os.path.join(DIR, "tensorflow_lingvo__lingvo__tasks__mt__testdata__translate_ende_wmt32k-train-00511-of-00512")
MNIST_SPEC = {"image_class": recordwire.FixedLen((1,), "int64"), "image_floats": recordwire.FixedLen((784,), "float32")}
WMT_SPEC = {"inputs": recordwire.VarLen("int64"), "targets": recordwire.VarLen("int64")}


class PerItem(rwt.MapDataset):
    __getitems__ = None  # the fetcher then indexes one record at a time


def epoch_rate(make_ds, collate_fn, epochs=10):
    ds = make_ds()
    n = len(ds)
    kwargs = {} if collate_fn is None else {"collate_fn": collate_fn}
    loader = DataLoader(ds, batch_size=256, shuffle=True, num_workers=0, **kwargs)
    best = 0.0
    for _ in range(epochs):
        seen = 0
        t = time.perf_counter()
        for batch in loader:
            col = next(iter(batch.values()))
            seen += len(col.lengths) if isinstance(col, recordwire.Padded) else col.shape[0] if hasattr(col, "shape") else len(col)
        dt = time.perf_counter() - t
        assert seen == n, (seen, n)
        best = max(best, n / dt)
    return n, best


def main():
    torch.manual_seed(0)
    has_collate = hasattr(rwt, "collate")
    runs = [
        ("mnist  default_collate", lambda: rwt.MapDataset(MNIST, spec=MNIST_SPEC), None),
        ("mnist  default_collate per-item", lambda: PerItem(MNIST, spec=MNIST_SPEC), None),
    ]
    if has_collate:
        runs += [
            ("mnist  recordwire collate", lambda: rwt.MapDataset(MNIST, spec=MNIST_SPEC), rwt.collate),
            ("wmt    collate pad", lambda: rwt.MapDataset(WMT, spec=WMT_SPEC), rwt.collate),
            ("wmt    collate nested", lambda: rwt.MapDataset(WMT, spec=WMT_SPEC), functools.partial(rwt.collate, ragged="nested")),
            ("wmt    collate pad per-item", lambda: PerItem(WMT, spec=WMT_SPEC), rwt.collate),
        ]
    for name, make, fn in runs:
        n, rate = epoch_rate(make, fn)
        print(f"{LABEL}: {name:<34} {n:>6} records  {rate:>10,.0f} records/s")


if __name__ == "__main__":
    main()
