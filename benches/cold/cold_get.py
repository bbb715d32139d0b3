#!/usr/bin/env python3
"""Cold random access: bytes read from disk and time for `recordwire get` of
random ids on a file that is not in the page cache.

    python3 benches/cold/cold_get.py NEW_BINARY [OLD_BINARY] [--size-mib 1024] [--ids 1000]

Writes a TFRecord file of random 4 KiB payloads (through an OFRecord file that
this script writes and `recordwire convert` turns into TFRecord), indexes it,
then for each binary and each of 3 rounds: evicts the data file and its index
from the page cache (posix_fadvise DONTNEED), runs `get --payload raw` of the
same random ids, and records the wall time and the blocks the child read
(getrusage ru_inblock, 512-byte units). Prints the medians. Only the Python
standard library is used (Linux: posix_fadvise, getrusage).
"""
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def run(binary, args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_inblock
    start = time.perf_counter()
    subprocess.run([binary] + args, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_inblock
    return seconds, (after - before) * 512


def main():
    argv = sys.argv[1:]
    size_mib, n_ids = 1024, 1000
    if "--size-mib" in argv:
        i = argv.index("--size-mib")
        size_mib = int(argv[i + 1])
        del argv[i : i + 2]
    if "--ids" in argv:
        i = argv.index("--ids")
        n_ids = int(argv[i + 1])
        del argv[i : i + 2]
    binaries = argv
    record = 4096
    count = size_mib * 1024 * 1024 // (record + 16)
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(dir=os.environ.get("COLD_DIR", "/var/tmp")) as d:
        of = os.path.join(d, "data.ofrecord")
        with open(of, "wb") as f:
            chunk = os.urandom(record * 64)
            for i in range(count):
                j = (i % 64) * record
                f.write(record.to_bytes(8, "little", signed=True))
                f.write(chunk[j : j + record])
        tf = os.path.join(d, "data.tfrecord")
        subprocess.run(
            [binaries[0], "convert", "--payload", "raw", of, tf, "--out-framing", "tfrecord"],
            check=True,
        )
        os.remove(of)
        subprocess.run([binaries[0], "index", tf], check=True, stderr=subprocess.DEVNULL)
        ids = [str(rng.randrange(count)) for _ in range(n_ids)]
        size = os.path.getsize(tf)
        print(f"file: {size / 2**20:.0f} MiB, {count} records of {record} bytes; {n_ids} random ids")
        results = {b: [] for b in binaries}
        for _ in range(3):
            for b in binaries:
                evict(tf)
                evict(tf + ".rwindex")
                results[b].append(run(b, ["get", "--payload", "raw", tf] + ids))
        for b in binaries:
            secs = statistics.median(r[0] for r in results[b])
            read = statistics.median(r[1] for r in results[b])
            print(f"{b}: median {secs:.3f} s, {read / 2**20:.1f} MiB read from disk "
                  f"(runs: {', '.join(f'{s:.3f} s/{r / 2**20:.0f} MiB' for s, r in results[b])})")


if __name__ == "__main__":
    main()
