"""Bounded memory over a large GZIP shard (issue 24): opening it through
``recordwire.Dataset`` (its checkpoint index built in memory) and reading
1,000 random ids keeps the peak resident set far below the decompressed
size: nothing decompresses the file whole.

The shard (about 300 MB of BERT-like tf.Examples once decompressed; the
environment variable ``RECORDWIRE_BOUNDED_MB`` sets another size) is written
by the test. The reads run in a child Python process, which prints its peak
resident set (``ru_maxrss``) before opening and after reading.

The compressed file is mapped and read whole once (the index build), so its
pages count in the resident set (clean file pages, which the kernel may
drop); above them the process holds the checkpoint index (a 32 KiB window
per MiB of output), the record offsets and a few inflated spans.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import resource
import shutil
import subprocess
import sys

import numpy as np
import pytest

import recordwire

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB, /proc: Linux")

READS = 1000
POOL = 2048
# Above the child's start-up, the mapped compressed file and a 16th of the
# decompressed size (checkpoint windows, record offsets), at most this much
# more may be resident (kept spans, allocator slack), as in the Rust test.
SLACK = 48 << 20


def varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def ld(tag: int, body: bytes) -> bytes:
    """A length-delimited field."""
    return bytes([tag]) + varint(len(body)) + body


def id_entry(i: int) -> bytes:
    """The Features map entry ``record_id: int64_list [i]``."""
    feature = ld(0x1A, ld(0x0A, varint(i)))
    return ld(0x0A, ld(0x0A, b"record_id") + ld(0x12, feature))


def bert_bodies(tmp_path) -> list:
    """``POOL`` BERT-like Features bodies (padded sequences, as BERT's
    pretraining data has), as the Writer serializes them."""
    rng = np.random.default_rng(7)
    pool = tmp_path / "pool.tfrecord"
    with recordwire.Writer(pool) as w:
        for _ in range(POOL):
            n = int(rng.integers(24, 129))
            ids = np.zeros(128, np.int64)
            ids[:n] = 1000 + (rng.integers(0, 30000, n) * rng.integers(0, 30000, n)) // 30000
            mask = (np.arange(128) < n).astype(np.int64)
            split = int(rng.integers(1, n))
            seg = ((np.arange(128) >= split) & (np.arange(128) < n)).astype(np.int64)
            k = max(1, min(20, n * 15 // 100))
            pos = np.zeros(20, np.int64)
            pos[:k] = np.sort(rng.integers(1, n, k))
            lm = np.zeros(20, np.int64)
            lm[:k] = rng.integers(1000, 30000, k)
            w.write(
                {
                    "input_ids": ids,
                    "input_mask": mask,
                    "segment_ids": seg,
                    "masked_lm_positions": pos,
                    "masked_lm_ids": lm,
                    "masked_lm_weights": (np.arange(20) < k).astype(np.float32),
                    "next_sentence_labels": rng.integers(0, 2, 1, dtype=np.int64),
                }
            )
    ds = recordwire.Dataset(pool)
    bodies = []
    for i in range(POOL):
        raw = bytes(ds.raw(i))
        assert raw[0] == 0x0A
        # Past the tag and the length varint: the Features body.
        at = 1
        while raw[at] & 0x80:
            at += 1
        bodies.append(raw[at + 1 :])
    return bodies


def record(bodies: list, i: int) -> bytes:
    return ld(0x0A, bodies[i % POOL] + id_entry(i))


@pytest.fixture(scope="module")
def shard(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bounded")
    bodies = bert_bodies(tmp)
    size = int(os.environ.get("RECORDWIRE_BOUNDED_MB", "300")) << 20
    plain = tmp / "big.tfrecord"
    n = written = 0
    with recordwire.Writer(plain) as w:
        while written < size:
            r = record(bodies, n)
            w.write(r)
            written += len(r) + 16
            n += 1
    gz = tmp / "big.tfrecord.gz"
    with open(plain, "rb") as src, gzip.open(gz, "wb", compresslevel=1) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    decompressed = plain.stat().st_size
    plain.unlink()
    rng = random.Random(24)
    ids = [rng.randrange(n) for _ in range(READS)]
    assert len(set(ids)) > READS * 9 // 10
    return gz, n, decompressed, ids, bodies


CHILD = r"""
import hashlib, json, resource, sys
import recordwire

path, ids = sys.argv[1], json.loads(sys.argv[2])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
ds = recordwire.Dataset(path)
digests = [hashlib.sha256(bytes(ds.raw(i))).hexdigest() for i in ids]
ids_seen = [int(ds[i]["record_id"][0]) for i in ids[::50]]
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
status = open("/proc/self/status").read().splitlines()
rss = " ".join(" ".join(l.split()) for l in status if l.startswith(("RssAnon", "RssFile")))
print(json.dumps({"before": before << 10, "after": after << 10, "len": len(ds), "rss": rss,
                  "digests": digests, "ids": ids_seen}))
"""


def test_gzip_shard_read_by_id_in_bounded_memory(shard):
    import hashlib

    gz, n, decompressed, ids, bodies = shard
    compressed = gz.stat().st_size
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(gz), json.dumps(ids)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    # The child's own report, and the parent's view of its children.
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss << 10
    grown = out["after"] - out["before"]
    print(
        f"python: {n} records, {decompressed} bytes decompressed, {compressed} compressed; "
        f"peak RSS {out['after']} bytes ({out['before']} after start-up, {grown} more; "
        f"children's max {children}; at the end {out['rss']})"
    )
    assert out["len"] == n
    assert out["digests"] == [hashlib.sha256(record(bodies, i)).hexdigest() for i in ids]
    assert out["ids"] == ids[::50]
    assert grown < compressed + decompressed // 16 + SLACK, (grown, compressed, decompressed)
