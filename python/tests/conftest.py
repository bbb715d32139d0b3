"""Shared helpers: the repository's testdata/, and a TFRecord writer."""

import os
import struct
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTDATA = ROOT / "testdata"

# The real record files (TFX, Lingvo, Waymo, OneFlow, ...) live beside the
# repository, not in it: RECORDWIRE_REALWORLD names their folder (relative to
# the repository root when relative), by default ../shared/realworld/files.
REALWORLD_VAR = "RECORDWIRE_REALWORLD"
_NOT_READ: list = []


def realworld_dir() -> Path:
    """Where the real files are looked for."""
    return ROOT / (os.environ.get(REALWORLD_VAR) or "../shared/realworld/files")


def real_files():
    """The real record files, sorted, or None where their folder is not
    there. Then the test goes on with what the repository holds, and one line
    "SKIP: real files not read: ..." ends the run's summary: not a pytest
    skip, which ./test.sh would count as a failure (every tool it installs
    must be used; the real files are not its to install)."""
    folder = realworld_dir()
    if folder.is_dir():
        return sorted(f for f in folder.iterdir() if f.is_file())
    who = os.environ.get("PYTEST_CURRENT_TEST", "collection").split(" ")[0]
    line = f"SKIP: real files not read: {folder} missing; set {REALWORLD_VAR} ({who})"
    print(line)
    _NOT_READ.append(line)
    return None


def pytest_terminal_summary(terminalreporter):
    """The lines of `real_files`, shown even though pytest captured them."""
    for line in dict.fromkeys(_NOT_READ):
        terminalreporter.write_line(line)


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def same_dict(a, b):
    """Two records as `ds[i]` gives them are equal: numpy arrays by value,
    lists of memoryviews by their bytes."""
    import numpy as np

    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            np.testing.assert_array_equal(a[k], b[k])
        else:
            assert [bytes(v) for v in a[k]] == [bytes(v) for v in b[k]]


def write_tfrecord(path: Path, payloads) -> Path:
    """Writes `payloads` as a TFRecord file (TensorFlow's framing)."""
    with open(path, "wb") as f:
        for p in payloads:
            length = struct.pack("<Q", len(p))
            f.write(length)
            f.write(struct.pack("<I", masked_crc(length)))
            f.write(p)
            f.write(struct.pack("<I", masked_crc(p)))
    return path


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for a gloo group's rendezvous)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def save_rank_ids(out_dir: str, rank: int, ids: list) -> None:
    """In a rank of a gloo group: its ids as ``rank{rank}.npy``, and the
    group's total count (an ``all_reduce``) as ``total{rank}.npy``."""
    import numpy as np
    import torch
    import torch.distributed as dist

    n = torch.tensor([len(ids)])
    dist.all_reduce(n)
    np.save(os.path.join(out_dir, f"rank{rank}.npy"), np.array(ids, dtype=np.int64))
    np.save(os.path.join(out_dir, f"total{rank}.npy"), n.numpy())


def check_rank_ids(out_dir: Path, world: int, n: int) -> list:
    """What ``save_rank_ids`` saved: equal, disjoint parts that together are
    every id below ``n``, and every rank saw the total ``n``. Returns the parts."""
    import numpy as np

    shards = [np.load(out_dir / f"rank{r}.npy").tolist() for r in range(world)]
    assert [len(s) for s in shards] == [n // world] * world
    together = [i for s in shards for i in s]
    assert len(set(together)) == len(together), "the ranks' parts overlap"
    assert sorted(together) == list(range(n))
    assert [int(np.load(out_dir / f"total{r}.npy")[0]) for r in range(world)] == [n] * world
    return shards


@pytest.fixture
def testdata() -> Path:
    return TESTDATA


@pytest.fixture(scope="session")
def s3():
    """moto's S3 server, one per test session (see remote_servers.py)."""
    from remote_servers import Moto

    server = Moto()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def range_server():
    """An HTTP server that honours ``Range`` (see remote_servers.py)."""
    from remote_servers import RangeServer

    server = RangeServer()
    yield server
    server.stop()
