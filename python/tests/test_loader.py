"""recordwire.Loader: every id of the rank once per epoch in the order's
sequence (threads 1 and 4, every order mode, ranks 0..3 of 4, plain, gzip
and S3 shards), batches equal to ``Dataset.decode`` of the same ids,
resume, errors at their batch with the threads stopped, the batch pool
(a warm epoch makes no new batch memory; held batches grow it), transforms
in order, ``break``, and a fork after start refused."""

import gc
import os
import threading
import time

import numpy as np
import pytest

import recordwire

N_PER_SHARD = 60
SPEC = {
    "label": recordwire.FixedLen((), "int64"),
    "x": recordwire.FixedLen(3, "float32"),
    "tokens": recordwire.VarLen("int64"),
    "name": recordwire.FixedLen((), "bytes"),
}
MODES = ["sequential", "shuffle", "page-aware", "quasi-random"]


def write_shards(directory, shards=3, compression=None):
    paths = []
    for s in range(shards):
        suffix = ".gz" if compression else ""
        path = directory / f"part-{s}.tfrecord{suffix}"
        with recordwire.Writer(path, compression=compression, gzip_blocks=2048 if compression else None) as w:
            for i in range(N_PER_SHARD):
                n = s * N_PER_SHARD + i
                w.write(
                    {
                        "label": n,
                        "x": np.full(3, n, dtype=np.float32),
                        "tokens": np.arange(n % 5, dtype=np.int64) + 100 * n,
                        "name": f"record-{n}".encode(),
                    }
                )
        paths.append(str(path))
    return paths


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    return write_shards(tmp_path_factory.mktemp("plain"))


@pytest.fixture(scope="module")
def gz(tmp_path_factory):
    return write_shards(tmp_path_factory.mktemp("gz"), compression="gzip")


def same_column(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, tuple):
        return type(a) is type(b) and all(same_column(x, y) for x, y in zip(a, b))
    if isinstance(a, list):
        return [bytes(v) for v in a] == [bytes(v) for v in b]
    return a == b


def check_epoch(loader, ds, epoch, order_args):
    """One epoch of ``loader``: the order's ids batch by batch, each batch
    equal to ``ds.decode`` of its ids."""
    expected = ds.order(epoch=epoch, **order_args)
    got = []
    for k, batch in enumerate(loader):
        assert (batch.epoch, batch.index) == (epoch, k)
        want = expected[len(got) : len(got) + loader.batch_size]
        assert batch.ids.tolist() == want.tolist()
        ref = ds.decode(want, loader.spec)
        assert set(batch) == set(ref)
        for name in ref:
            assert same_column(batch[name], ref[name]), name
        got.extend(batch.ids.tolist())
    assert got == expected.tolist()
    return got


@pytest.mark.parametrize("shards", ["plain", "gz"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("threads", [1, 4])
def test_every_id_of_every_rank_once_per_epoch(request, shards, mode, threads):
    paths = request.getfixturevalue(shards)
    ds = recordwire.Dataset(paths)
    seen, lengths = [], []
    for rank in range(4):
        order_args = dict(mode=mode, seed=3, rank=rank, world=4, page_size=512)
        loader = recordwire.Loader(
            ds, SPEC, 7, order=mode, seed=3, rank=rank, world=4, page_size=512, threads=threads
        )
        for epoch in range(2):
            ids = check_epoch(loader, ds, epoch, order_args)
            if epoch == 0:
                seen.extend(ids)
                lengths.append(len(ids))
        assert loader.running_threads() == 0
    assert len(set(lengths)) == 1, lengths
    assert sorted(set(seen)) == list(range(3 * N_PER_SHARD))


def test_every_id_of_s3_shards(s3, plain, gz, tmp_path):
    s3.bucket("loader")
    for p in plain + gz:
        s3.put("loader", os.path.basename(p), open(p, "rb").read())
    options = s3.options(str(tmp_path / "cache"))
    for local, suffix in [(plain, ""), (gz, ".gz")]:
        urls = [f"s3://loader/part-{s}.tfrecord{suffix}" for s in range(3)]
        ds = recordwire.Dataset(urls, storage_options=options)
        local_ds = recordwire.Dataset(local)
        for mode in ["shuffle", "page-aware"]:
            for rank in range(2):
                # Page size 0: by checkpoint span (compressed shards).
                page_size = (0 if suffix else 65536) if mode == "page-aware" else 4096
                order_args = dict(mode=mode, seed=1, rank=rank, world=2, page_size=page_size)
                loader = recordwire.Loader(ds, SPEC, 16, order=mode, seed=1, rank=rank, world=2,
                                           page_size=order_args["page_size"], threads=2)
                got = check_epoch(loader, ds, 0, order_args)
                # The same bytes as the local files: decode them there too.
                for batch_ids in np.array_split(np.array(got), 4):
                    a, b = ds.decode(batch_ids, SPEC), local_ds.decode(batch_ids, SPEC)
                    assert all(same_column(a[k], b[k]) for k in a)


def test_resume_gives_exactly_the_rest(plain):
    ds = recordwire.Dataset(plain)
    whole = recordwire.Loader(ds, SPEC, 8, seed=9, threads=2)
    whole.set_epoch(1)
    all_ids = [b.ids.tolist() for b in whole]
    assert whole.state_dict()["epoch"] == 2
    for k in [0, 3, len(all_ids) - 1]:
        first = recordwire.Loader(ds, SPEC, 8, seed=9, threads=2)
        first.set_epoch(1)
        it = iter(first)
        for _ in range(k):
            next(it)
        state = first.state_dict()
        assert (state["epoch"], state["batch"]) == (1, k)
        del it, first
        resumed = recordwire.Loader(ds, SPEC, 8, seed=9, threads=2)
        resumed.load_state_dict(state)
        assert [b.ids.tolist() for b in resumed] == all_ids[k:]
    other = recordwire.Loader(ds, SPEC, 8, seed=10)
    with pytest.raises(ValueError, match="another order"):
        other.load_state_dict(state)


def test_break_stops_the_threads_and_the_next_loop_goes_on(plain):
    ds = recordwire.Dataset(plain)
    loader = recordwire.Loader(ds, SPEC, 10, order="sequential", threads=3, prefetch=4)
    for batch in loader:
        if batch.index == 2:
            break
    assert loader.running_threads() == 0
    assert loader.state_dict()["batch"] == 3
    assert [b.index for b in loader] == list(range(3, len(loader)))


def thread_count():
    return len(os.listdir("/proc/self/task"))


def test_a_damaged_record_fails_its_batch_after_the_ones_before(tmp_path):
    path = write_shards(tmp_path, shards=1)[0]
    ds = recordwire.Dataset(path)
    victim = 37
    payload = bytes(ds.raw(victim))
    data = bytearray(open(path, "rb").read())
    # Flip a byte of record 37's payload: its data CRC no longer matches.
    start = data.find(payload)
    assert start > 0 and data.find(payload, start + 1) == -1
    data[start + 5] ^= 0x20
    open(path, "wb").write(bytes(data))
    ds = recordwire.Dataset(path)
    before = thread_count()
    for threads in [1, 4]:
        loader = recordwire.Loader(ds, SPEC, 10, order="sequential", threads=threads)
        seen = []
        with pytest.raises(recordwire.Error) as info:
            for batch in loader:
                seen.append(batch.index)
        assert seen == [0, 1, 2]
        err = info.value
        assert err.kind == "data_crc_mismatch"
        assert err.record == victim
        assert err.file.endswith("part-0.tfrecord")
        assert err.offset is not None and err.offset > 0
        assert loader.running_threads() == 0
        # The next loop goes on after the failed batch.
        assert [b.index for b in loader] == [4, 5]
        del loader
    gc.collect()
    assert thread_count() == before


def test_a_warm_epoch_makes_no_new_batch_memory(plain):
    ds = recordwire.Dataset(plain)
    fixed = {"label": SPEC["label"], "x": SPEC["x"], "name": SPEC["name"]}
    loader = recordwire.Loader(ds, fixed, 16, threads=2, prefetch=2, workers=2, drop_last=True)
    # A loop that keeps its last batch holds two when the next arrives,
    # with prefetch + workers being made: the cold epoch must reach that.
    most = 2 + 2 + 2
    it = iter(loader)
    first = next(it)
    wait_until(lambda: loader.pool_stats()["made"] >= most - 1)
    # Both held while the pipeline refills: no free batch to take, so it
    # must make the last one. (Rebinding one name instead let the first
    # go back to the pool before the pipeline asked, on a slow machine.)
    second = next(it)
    wait_until(lambda: loader.pool_stats()["made"] >= most)
    del first, second
    for batch in it:
        pass
    del batch
    cold = loader.pool_stats()
    assert cold["made"] == most and cold["grown_bytes"] > 0, cold
    for _ in range(3):
        for batch in loader:
            batch["x"] *= 2  # the arrays are writable views of the pool
        del batch
    warm = loader.pool_stats()
    assert (warm["made"], warm["grown_bytes"], warm["dropped"]) == (cold["made"], cold["grown_bytes"], 0), (cold, warm)
    assert warm["reused"] - cold["reused"] == 3 * len(loader)


def wait_until(condition, seconds=30):
    since = time.monotonic()
    while not condition():
        assert time.monotonic() - since < seconds, "timed out"
        time.sleep(0.001)


def test_held_batches_grow_the_pool_and_stay_intact(plain):
    ds = recordwire.Dataset(plain)
    loader = recordwire.Loader(ds, SPEC, 4, order="sequential", threads=2, prefetch=2, workers=2)
    held = list(loader)  # every batch of the epoch, far more than the pool keeps
    assert len(held) == 45
    labels = np.concatenate([b["label"] for b in held])
    assert labels.tolist() == list(range(180)), "a held batch was reused under the caller"
    stats = loader.pool_stats()
    assert stats["made"] >= 45, stats
    # Only a view kept: its batch stays out of the pool.
    kept = held[7]["x"]
    del held
    gc.collect()
    stats = loader.pool_stats()
    assert stats["free"] == 2 + 2 + 2, stats
    for batch in loader:
        pass
    assert kept[:, 0].tolist() == [28.0, 29.0, 30.0, 31.0]


def test_transforms_run_on_threads_and_keep_the_order(plain):
    ds = recordwire.Dataset(plain)
    active, most = [0], [0]
    lock = threading.Lock()

    def slow(batch):
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        time.sleep(0.01 * (3 - batch.index % 3))  # later batches finish first
        with lock:
            active[0] -= 1
        return batch.index, batch["label"].sum()

    loader = recordwire.Loader(ds, SPEC, 10, seed=4, transform=slow, transform_threads=3)
    out = list(loader)
    assert [k for k, _ in out] == list(range(len(loader)))
    order = ds.order(seed=4)
    assert [int(s) for _, s in out] == [int(order[i : i + 10].sum()) for i in range(0, len(order), 10)]
    assert most[0] > 1, "the transforms never overlapped"
    loader.close()

    def failing(batch):
        if batch.index == 4:
            raise KeyError("no such thing")
        return batch.index

    loader = recordwire.Loader(ds, SPEC, 10, transform=failing, transform_threads=2)
    got = []
    with pytest.raises(KeyError):
        for k in loader:
            got.append(k)
    assert got == [0, 1, 2, 3]
    assert loader.state_dict()["batch"] == 5
    loader.close()


def test_arrow_batches_are_the_decode_arrow_form(plain):
    ds = recordwire.Dataset(plain)
    loader = recordwire.Loader(ds, SPEC, 25, seed=2, to="arrow")
    order = ds.order(seed=2)
    for k, batch in enumerate(loader):
        assert batch.equals(ds.decode(order[25 * k : 25 * (k + 1)], SPEC, to="arrow"))


def test_a_fork_after_start_is_refused_in_the_child(plain):
    ds = recordwire.Dataset(plain)
    loader = recordwire.Loader(ds, SPEC, 10, threads=2)
    it = iter(loader)
    next(it)
    pid = os.fork()
    if pid == 0:  # the child: it must fail, not hang
        code = 3
        try:
            next(it)
        except recordwire.Error as e:
            code = 0 if "forked" in str(e) else 4
        except BaseException:
            code = 5
        os._exit(code)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            pytest.fail("the forked child hung")
        time.sleep(0.01)
    assert os.waitstatus_to_exitcode(status) == 0
    # The parent goes on.
    assert next(it).index == 1


def test_options_that_cannot_work(plain):
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        recordwire.Loader(plain, SPEC, 0)
    with pytest.raises(ValueError, match="rank"):
        recordwire.Loader(plain, SPEC, 4, rank=4, world=4)
    with pytest.raises(ValueError, match="to:"):
        recordwire.Loader(plain, SPEC, 4, to="pandas")  # type: ignore[arg-type]
