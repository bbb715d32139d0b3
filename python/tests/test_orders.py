"""Orders: the same ids as the CLI's `order` command; shards disjoint and
complete; the resumable cursor."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import recordwire
from conftest import ROOT, TESTDATA, write_tfrecord

EXAMPLES = TESTDATA / "ref" / "examples.tfrecord"


def cli() -> str:
    """The recordwire binary `cargo test` built (built here if missing)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    exe = target / "debug" / "recordwire"
    if not exe.exists():
        subprocess.run(["cargo", "build", "--quiet", "--bin", "recordwire"], cwd=ROOT, check=True)
    assert exe.exists(), exe
    return str(exe)


@pytest.mark.parametrize(
    "mode,extra",
    [("sequential", []), ("shuffle", []), ("page-aware", ["--page-size", "4096"]), ("quasi-random", ["--page-size", "4096", "--window", "4"])],
)
@pytest.mark.parametrize("rank,world,tail", [(0, 1, "pad"), (1, 3, "pad"), (2, 3, "drop-last"), (0, 3, "keep")])
def test_order_equals_the_cli(mode, extra, rank, world, tail):
    ds = recordwire.Dataset(str(EXAMPLES))
    for epoch in (0, 3):
        args = [cli(), "order", str(EXAMPLES), "--mode", mode, "--seed", "11", "--epoch", str(epoch),
                "--rank", str(rank), "--world", str(world), "--tail", tail, *extra]
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
        want = [int(x) for x in out.split()]
        kw = dict(mode=mode, seed=11, epoch=epoch, rank=rank, world=world, tail=tail)
        if extra:
            kw["page_size"] = 4096
        if mode == "quasi-random":
            kw["window"] = 4
        got = ds.order(**kw)
        assert got.dtype == np.int64
        assert got.tolist() == want
        lazy = np.concatenate(list(ds.order(lazy=True, **kw)) or [np.empty(0, np.int64)])
        assert lazy.tolist() == want


def test_shards_are_disjoint_complete_and_equal(tmp_path):
    path = write_tfrecord(tmp_path / "n.tfrecord", [b""] * 103)
    ds = recordwire.Dataset(str(path), payload="raw")
    for world in (1, 2, 4, 7):
        parts = [ds.order(seed=5, epoch=1, rank=r, world=world, tail="keep") for r in range(world)]
        assert sorted(np.concatenate(parts).tolist()) == list(range(103))
        padded = [ds.order(seed=5, epoch=1, rank=r, world=world) for r in range(world)]
        assert len({len(p) for p in padded}) == 1
        # Rank 0's part, split across 3 data-loader workers: together, that part.
        workers = [ds.order(seed=5, epoch=1, rank=0, world=world, worker=w, workers=3, tail="keep") for w in range(3)]
        assert sorted(np.concatenate(workers).tolist()) == sorted(parts[0].tolist())
    assert ds.order(seed=1).tolist() != ds.order(seed=2).tolist()
    assert ds.order(seed=1, epoch=0).tolist() != ds.order(seed=1, epoch=1).tolist()


def test_bad_order_arguments():
    ds = recordwire.Dataset(str(EXAMPLES))
    with pytest.raises(ValueError, match="mode"):
        ds.order(mode="random")
    with pytest.raises(ValueError):
        ds.order(rank=2, world=2)
    with pytest.raises(ValueError, match="tail"):
        ds.order(tail="wrap")


def test_cursor_resumes_mid_epoch(tmp_path):
    path = write_tfrecord(tmp_path / "n.tfrecord", [b""] * 50)
    ds = recordwire.Dataset(str(path), payload="raw")
    whole = ds.orders(seed=9, epoch=2)
    want = list(whole)
    assert sorted(want) == list(range(50))
    c = ds.orders(seed=9, epoch=2)
    first = c.next_ids(17).tolist()
    state = c.state_dict()
    resumed = ds.orders(seed=9)
    resumed.load_state_dict(state)
    assert first + list(resumed) == want
    other = ds.orders(seed=10)
    with pytest.raises(ValueError):
        other.load_state_dict(state)
    c.set_epoch(3)
    assert c.next_ids(100).tolist() == ds.order(seed=9, epoch=3).tolist()


def test_cursor_state_counts_the_ids_handed_out_however_they_were_taken(tmp_path):
    # A state taken after any mix of iteration and next_ids resumes at the
    # next id: the resumed ids complete the uninterrupted epoch exactly
    # (the position once counted the 4096-id chunk iteration fetched).
    path = write_tfrecord(tmp_path / "n.tfrecord", [b""] * 10000)
    ds = recordwire.Dataset(str(path), payload="raw")
    order = dict(mode="shuffle", seed=3)
    want = ds.order(**order, epoch=1).tolist()
    rng = np.random.default_rng(5)
    for trial in range(12):
        c = ds.orders(**order, epoch=1)
        it = iter(c)
        got = []
        stop = int(rng.integers(0, 10000))
        while len(got) < stop:
            step = int(rng.integers(1, 5000))
            way = ["iter", "next_ids", "fresh_iter"][(trial + len(got)) % 3]
            take = min(step, stop - len(got))
            if way == "next_ids":
                got += c.next_ids(take).tolist()
            else:
                if way == "fresh_iter":
                    it = iter(c)
                got += [next(it) for _ in range(take)]
        state = c.state_dict()
        assert state["position"] == len(got), (trial, state, len(got))
        resumed = ds.orders(**order)
        resumed.load_state_dict(state)
        rest = list(resumed)
        assert got + rest == want, trial
        # The interrupted iterator itself also goes on where the state says.
        assert list(it) == rest if stop < 10000 else True


def test_cursor_iteration_follows_set_epoch_and_load_state_dict(tmp_path):
    path = write_tfrecord(tmp_path / "n.tfrecord", [b""] * 300)
    ds = recordwire.Dataset(str(path), payload="raw")
    c = ds.orders(seed=1)
    it = iter(c)
    first = [next(it) for _ in range(10)]
    assert first == ds.order(seed=1).tolist()[:10]
    c.set_epoch(4)
    assert list(it) == ds.order(seed=1, epoch=4).tolist()
