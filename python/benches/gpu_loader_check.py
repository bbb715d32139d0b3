"""The GPU check of recordwire.torch.Loader (issue 28), run once on a
machine with CUDA: the pin_memory / device= paths of the test suite, then
records/s into CUDA tensors against the same loader into CPU tensors, and
the time a GPU-bound step waits for data.

    PYTHONPATH=python python3 python/benches/gpu_loader_check.py [OUT_DIR]

Writes a BERT-like file of 20,000 records (int64 token ids of 128, a
label, a float mask) to a temporary directory first; prints one JSON line
per measurement (and saves them to OUT_DIR/gpu_loader.json when given).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

import recordwire
import recordwire.torch as rwt

SPEC = {
    "input_ids": recordwire.FixedLen(128, "int64"),
    "input_mask": recordwire.FixedLen(128, "float32"),
    "label": recordwire.FixedLen((), "int64"),
}


def write(path: str, n: int) -> None:
    rng = np.random.default_rng(0)
    with recordwire.Writer(path) as w:
        for i in range(n):
            w.write(
                {
                    "input_ids": rng.integers(0, 30000, 128, dtype=np.int64),
                    "input_mask": np.ones(128, dtype=np.float32),
                    "label": i,
                }
            )


def epoch(loader, step=None) -> dict:
    waited, n = 0.0, 0
    t0 = time.perf_counter()
    it = iter(loader)
    while True:
        w0 = time.perf_counter()
        try:
            batch = next(it)
        except StopIteration:
            break
        waited += time.perf_counter() - w0
        n += len(batch.ids)
        if step is not None:
            step(batch)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    total = time.perf_counter() - t0
    return {"records_per_s": round(n / total), "wait_fraction": round(waited / total, 4), "records": n}


def main() -> None:
    out_dir = sys.argv[1] if len(sys.argv) > 1 else None
    here = os.path.dirname(os.path.abspath(__file__))
    tests = os.path.join(here, "..", "tests", "test_torch_loader.py")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", tests])
    results = [{"what": "pytest test_torch_loader.py", "exit": r.returncode}]
    print(json.dumps(results[-1]), flush=True)
    print(json.dumps({"cuda": torch.cuda.is_available(), "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None, "torch": torch.__version__}), flush=True)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bert.tfrecord")
        write(path, 20000)
        weight = torch.randn(128, 4096, device="cuda") if torch.cuda.is_available() else None

        def gpu_step(batch):  # a few ms of GPU work per batch, queued asynchronously
            x = batch["input_mask"] @ weight
            for _ in range(20):
                x = torch.tanh(x @ weight.T) @ weight

        cases = [
            ("numpy", lambda: recordwire.Loader(path, SPEC, 256, threads=4), None),
            ("torch cpu", lambda: rwt.Loader(path, SPEC, 256, threads=4), None),
            ("torch cuda, pin_memory", lambda: rwt.Loader(path, SPEC, 256, threads=4, pin_memory=True, device="cuda"), None),
            ("torch cuda, not pinned", lambda: rwt.Loader(path, SPEC, 256, threads=4, device="cuda"), None),
            ("torch cuda, pin_memory, GPU step", lambda: rwt.Loader(path, SPEC, 256, threads=4, pin_memory=True, device="cuda", transform_threads=2), gpu_step),
        ]
        if not torch.cuda.is_available():
            cases = cases[:2]
        for name, make, step in cases:
            loader = make()
            epoch(loader, step)  # warm
            runs = [epoch(loader, step) for _ in range(3)]
            best = sorted(runs, key=lambda x: x["records_per_s"])[1]
            results.append({"what": name, **best})
            print(json.dumps(results[-1]), flush=True)
            loader.close()
    if out_dir:
        with open(os.path.join(out_dir, "gpu_loader.json"), "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
