"""recordwire.torch: DataLoader workers (fork and spawn) see each id of the
rank once per epoch; two ranks in a real gloo group get disjoint, complete,
equal shards; resuming mid-epoch; a DataLoader that batches the iterable
dataset's batches again fails early; map-style items without a batch
dimension, fetched a batch at a time, and collated with var_len features."""

import os
import pickle
import sys

import numpy as np
import pytest

import recordwire

torch = pytest.importorskip("torch", reason="torch is installed by ./test.sh and .ci/run: it must not be missing there")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

import recordwire.torch as rwt  # noqa: E402
from conftest import check_rank_ids, free_port, save_rank_ids  # noqa: E402

N = 104
SPEC = {"id": recordwire.FixedLen((), "int64"), "x": recordwire.FixedLen(3, "float32")}


@pytest.fixture
def ids_file(tmp_path):
    path = tmp_path / "ids.tfrecord"
    with recordwire.Writer(path) as w:
        for i in range(N):
            w.write({"id": i, "x": np.full(3, i, dtype=np.float32), "name": f"r{i}"})
    return str(path)


def collect(loader):
    out = []
    for batch in loader:
        assert isinstance(batch["id"], torch.Tensor) and batch["id"].dtype == torch.int64
        assert torch.equal(batch["x"][:, 0].to(torch.int64), batch["id"])
        out.extend(batch["id"].tolist())
    return out


@pytest.mark.parametrize("context", ["fork", "spawn"])
@pytest.mark.parametrize("rank,world", [(0, 1), (1, 2)])
def test_workers_read_each_id_of_the_rank_once(ids_file, context, rank, world):
    data = rwt.IterableDataset(ids_file, spec=SPEC, batch_size=8, seed=3, rank=rank, world=world, tail="keep")
    loader = DataLoader(data, batch_size=None, num_workers=2, multiprocessing_context=context)
    ds = recordwire.Dataset(ids_file)
    for epoch in (0, 1):
        data.set_epoch(epoch)
        got = collect(loader)
        want = ds.order(seed=3, epoch=epoch, rank=rank, world=world, tail="keep").tolist()
        assert sorted(got) == sorted(want)
        assert len(got) == len(set(got))


def test_borrowed_bytes_leave_workers_as_bytes(ids_file):
    spec = '{"features": {"id": {"form": "fixed_len", "dtype": "int64", "shape": []}, "name": {"form": "fixed_len", "dtype": "bytes", "shape": [], "borrow": true}}}'
    data = rwt.IterableDataset(ids_file, spec=spec, batch_size=16, seed=2)
    # In this process the values stay views into the map (no copy) ...
    local = next(iter(data))
    assert all(isinstance(v, memoryview) for v in local["name"])
    # ... and from workers they come as bytes (a view would drag the file along).
    seen = 0
    for batch in DataLoader(data, batch_size=None, num_workers=2):
        assert all(isinstance(v, bytes) for v in batch["name"])
        assert [v.decode() for v in batch["name"]] == [f"r{i}" for i in batch["id"].tolist()]
        seen += len(batch["name"])
    assert seen == N
    records = DataLoader(rwt.IterableDataset(ids_file, seed=2), batch_size=None, num_workers=2)
    assert sorted(bytes(r["name"][0]).decode() for r in records) == sorted(f"r{i}" for i in range(N))


def test_resume_mid_epoch(ids_file):
    data = rwt.IterableDataset(ids_file, spec=SPEC, batch_size=10, seed=1)
    data.set_epoch(4)
    it = iter(data)
    first = [next(it)["id"].tolist() for _ in range(3)]
    state = data.state_dict()
    assert state["position"] == 30
    again = rwt.IterableDataset(ids_file, spec=SPEC, batch_size=10, seed=1)
    again.load_state_dict(state)
    rest = [b["id"].tolist() for b in again]
    flat = [i for b in first + rest for i in b]
    assert flat == recordwire.Dataset(ids_file).order(seed=1, epoch=4).tolist()
    with pytest.raises(ValueError):
        rwt.IterableDataset(ids_file, spec=SPEC, batch_size=10, seed=2).load_state_dict(state)
    # Split across workers, a mid-epoch position would skip the wrong ids.
    split = rwt.IterableDataset(ids_file, spec=SPEC, batch_size=10, seed=1)
    split.load_state_dict(state)
    with pytest.raises(RuntimeError, match="num_workers"):
        list(DataLoader(split, batch_size=None, num_workers=2))


def test_map_dataset_and_sampler(ids_file):
    data = rwt.MapDataset(ids_file, spec=SPEC)
    sampler = rwt.DistributedSampler(data, seed=7, rank=1, world=3)
    sampler.set_epoch(2)
    order = list(sampler)
    assert order == recordwire.Dataset(ids_file).order(seed=7, epoch=2, rank=1, world=3).tolist()
    assert len(sampler) == len(order) == 35  # 104 padded to 105 over 3 ranks
    loader = DataLoader(data, sampler=sampler, batch_size=None, num_workers=2)
    got = [int(b["id"]) for b in loader]  # items have no batch dimension
    assert got == order
    plain = rwt.MapDataset(ids_file)
    assert plain[5]["id"].tolist() == [5]


def _rank_main(rank, world, port, path, out_dir):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        data = rwt.IterableDataset(path, spec=SPEC, batch_size=8, seed=5)
        sampler = rwt.DistributedSampler(recordwire.Dataset(path), seed=5)
        assert (data.rank, data.world) == (rank, world) == (sampler.rank, sampler.world)
        loader = DataLoader(data, batch_size=None, num_workers=2)
        save_rank_ids(out_dir, rank, [i for b in loader for i in b["id"].tolist()])
        np.save(os.path.join(out_dir, f"sampler{rank}.npy"), np.array(list(sampler), dtype=np.int64))
    finally:
        dist.destroy_process_group()


def test_two_ranks_in_a_gloo_group(ids_file, tmp_path):
    world = 2
    mp.spawn(_rank_main, args=(world, free_port(), ids_file, str(tmp_path)), nprocs=world, join=True)
    check_rank_ids(tmp_path, world, N)
    samplers = [np.load(tmp_path / f"sampler{r}.npy").tolist() for r in range(world)]
    assert sorted(samplers[0] + samplers[1]) == list(range(N))


def test_adapters_over_compressed_shards(ids_file, tmp_path):
    """A GZIP shard and a ZLIB shard beside the plain one: the same ids in
    the same batches, through DataLoader workers too."""
    gz, zz = tmp_path / "ids.tfrecord.gz", tmp_path / "more.tfrecord.zz"
    for path, compression in [(gz, "gzip"), (zz, "zlib")]:
        with recordwire.Writer(path, compression=compression) as w:
            for i in range(N, 2 * N):
                w.write({"id": i, "x": np.full(3, i, dtype=np.float32), "name": f"r{i}"})
    paths = [ids_file, str(gz), str(zz)]
    assert recordwire.Dataset(paths).compression == ["none", "gzip", "zlib"]
    data = rwt.IterableDataset(paths, spec=SPEC, batch_size=8, seed=4)
    got = collect(DataLoader(data, batch_size=None, num_workers=2))
    assert sorted(got) == sorted(list(range(N)) + 2 * list(range(N, 2 * N)))
    mapped = rwt.MapDataset(paths, spec=SPEC)
    assert len(mapped) == 3 * N
    for i in [0, N, N + 7, 3 * N - 1]:
        item = mapped[i]
        want = i if i < N else N + (i - N) % N
        assert int(np.asarray(item["id"]).reshape(-1)[0]) == want


# ---- batching: IterableDataset's batches, MapDataset's items, collate ----

VAR_SPEC = {
    "id": recordwire.FixedLen((), "int64"),
    "x": recordwire.FixedLen(3, "float32"),
    "tokens": recordwire.VarLen("int64"),
    "w": recordwire.VarLen("float32"),
    "name": recordwire.FixedLen((), "string"),
    "tags": recordwire.VarLen("string"),
}
M = 23


def tokens_of(i):
    return np.arange(i % 5, dtype=np.int64) * 10 + i  # lengths 0..4: empty rows too


@pytest.fixture
def var_file(tmp_path):
    path = tmp_path / "var.tfrecord"
    with recordwire.Writer(path) as w:
        for i in range(M):
            w.write(
                {
                    "id": i,
                    "x": np.full(3, i, dtype=np.float32),
                    "tokens": tokens_of(i),
                    "w": tokens_of(i).astype(np.float32) / 2,
                    "name": f"r{i}",
                    "tags": [f"t{j}".encode() for j in range(i % 3)],
                }
            )
    return str(path)


@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.parametrize("batch_size", [1, 4])
def test_a_dataloader_that_batches_the_batches_again_fails_early(ids_file, num_workers, batch_size):
    data = rwt.IterableDataset(ids_file, spec=SPEC, batch_size=8, seed=0)
    kwargs = {} if batch_size == 1 else {"batch_size": batch_size}  # DataLoader's default is 1
    with pytest.raises(ValueError, match=r"IterableDataset, which yields whole batches.*batch_size=None"):
        next(iter(DataLoader(data, num_workers=num_workers, **kwargs)))
    batch = next(iter(DataLoader(data, batch_size=None, num_workers=num_workers)))
    assert batch["x"].shape == (8, 3) and batch["id"].shape == (8,)
    assert isinstance(batch, dict)


def test_map_items_have_no_batch_dimension(ids_file):
    data = rwt.MapDataset(ids_file, spec=SPEC)
    item = data[5]
    assert item["x"].shape == (3,) and item["id"].shape == ()
    assert int(item["id"]) == 5 and item["x"].tolist() == [5.0, 5.0, 5.0]
    batch = next(iter(DataLoader(data, batch_size=16)))  # torch's default collate
    assert batch["x"].shape == (16, 3) and batch["id"].tolist() == list(range(16))


def same(a, b):
    """Equal values of the same types, tensors compared element by element."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def test_getitems_gives_what_per_item_fetching_gives(var_file):
    data = rwt.MapDataset(var_file, spec=VAR_SPEC)
    ids = [7, 3, 3, 0, 22, 5]
    got = data.__getitems__(ids)
    assert len(got) == len(ids)  # before the records are split from the batch
    assert same(list(pickle.loads(pickle.dumps(data.__getitems__(ids)))), list(got))
    for i, item in zip(ids, got):
        assert same(item, data[i])
        assert item["tokens"].tolist() == tokens_of(i).tolist()
        assert item["w"].tolist() == (tokens_of(i) / 2).tolist()
        assert item["name"] == f"r{i}".encode() and item["tags"] == [f"t{j}".encode() for j in range(i % 3)]
    # A transform sees each record, by either path.
    shifted = rwt.MapDataset(var_file, spec=VAR_SPEC, transform=lambda r: {"id": r["id"] + 100})
    assert [int(r["id"]) for r in shifted.__getitems__(ids)] == [i + 100 for i in ids]
    assert int(shifted[4]["id"]) == 104


def check_padded(batch, want_ids):
    assert batch["id"].tolist() == want_ids and batch["x"].shape == (len(want_ids), 3)
    tokens, w = batch["tokens"], batch["w"]
    assert isinstance(tokens, recordwire.Padded) and tokens.lengths.dtype == torch.int64
    assert tokens.lengths.tolist() == [i % 5 for i in want_ids]
    assert tokens.values.shape == (len(want_ids), max(i % 5 for i in want_ids))
    for r, i in enumerate(want_ids):
        n = i % 5
        assert tokens.values[r, :n].tolist() == tokens_of(i).tolist()
        assert (tokens.values[r, n:] == 0).all()
        assert w.values[r, :n].tolist() == (tokens_of(i) / 2).tolist()
    assert batch["name"] == [f"r{i}".encode() for i in want_ids]
    assert batch["tags"] == [[f"t{j}".encode() for j in range(i % 3)] for i in want_ids]


@pytest.mark.parametrize("num_workers", [0, 2])
def test_collate_pads_var_len_features_with_lengths(var_file, num_workers):
    data = rwt.MapDataset(var_file, spec=VAR_SPEC)
    loader = DataLoader(data, batch_size=4, num_workers=num_workers, collate_fn=rwt.collate)
    seen = []
    for b, batch in enumerate(loader):
        want = list(range(4 * b, min(4 * b + 4, M)))
        check_padded(batch, want)
        seen += want
    assert seen == list(range(M))


def test_collate_nests_var_len_features(var_file):
    import functools

    data = rwt.MapDataset(var_file, spec=VAR_SPEC)
    loader = DataLoader(
        data, batch_size=4, shuffle=True, collate_fn=functools.partial(rwt.collate, ragged="nested")
    )
    seen = []
    for batch in loader:
        ids = batch["id"].tolist()
        assert batch["tokens"].is_nested and batch["tokens"].layout == torch.jagged
        rows = batch["tokens"].unbind()
        assert [t.tolist() for t in rows] == [tokens_of(i).tolist() for i in ids]
        assert [t.tolist() for t in batch["w"].unbind()] == [(tokens_of(i) / 2).tolist() for i in ids]
        seen += ids
    assert sorted(seen) == list(range(M))


def test_collate_of_plain_records_matches_the_decoded_batch(var_file):
    """Records that are a plain list (made by hand, or by a transform) are
    collated from their values: the same batch when the lengths differ."""
    data = rwt.MapDataset(var_file, spec=VAR_SPEC)
    ids = [1, 2, 3, 4]
    fast = rwt.collate(data.__getitems__(ids))
    slow = rwt.collate([data[i] for i in ids])
    check_padded(fast, ids)
    check_padded(slow, ids)
    assert same(fast["tokens"].values, slow["tokens"].values)
    nested = rwt.collate([data[i] for i in ids], ragged="nested")
    assert [t.tolist() for t in nested["tokens"].unbind()] == [tokens_of(i).tolist() for i in ids]
    with pytest.raises(TypeError, match="batch_size"):
        next(iter(DataLoader(data, batch_size=None, collate_fn=rwt.collate)))
    with pytest.raises(ValueError, match="'pad' or 'nested'"):
        rwt.collate([data[1]], ragged="zeros")


def test_default_collate_still_fails_on_var_len_without_our_collate(var_file):
    data = rwt.MapDataset(var_file, spec={"tokens": recordwire.VarLen("int64")})
    with pytest.raises(RuntimeError, match="equal size"):
        next(iter(DataLoader(data, batch_size=4)))


def test_ragged_to_padded_and_to_nested_with_empty_rows():
    splits = np.array([0, 0, 3, 3, 4, 4], dtype=np.int64)  # rows of 0, 3, 0, 1, 0 values
    values = np.array([1.5, 2.5, 3.5, 4.5], dtype=np.float32)
    rows = [values[splits[r] : splits[r + 1]].tolist() for r in range(5)]
    padded = recordwire.Ragged(values, splits).to_padded(pad_value=-1)
    assert isinstance(padded, recordwire.Padded)
    assert padded.values.dtype == np.float32 and padded.values.shape == (5, 3)
    assert padded.lengths.tolist() == [0, 3, 0, 1, 0]
    assert padded.values.tolist() == [[-1, -1, -1], [1.5, 2.5, 3.5], [-1, -1, -1], [4.5, -1, -1], [-1, -1, -1]]
    nested = recordwire.Ragged(values, splits).to_nested()
    assert nested.is_nested and nested.layout == torch.jagged and nested.dtype == torch.float32
    assert [t.tolist() for t in nested.unbind()] == rows
    assert nested.values().data_ptr() == torch.from_numpy(values).data_ptr()  # no copy
    # The same from tensors (a column after to_torch), and from splits that do not start at 0.
    as_tensors = recordwire.Ragged(torch.from_numpy(values), torch.from_numpy(splits))
    assert as_tensors.to_padded().values.tolist() == [[0, 0, 0], [1.5, 2.5, 3.5], [0, 0, 0], [4.5, 0, 0], [0, 0, 0]]
    tail = recordwire.Ragged(values, np.array([1, 3, 4]))
    assert [t.tolist() for t in tail.to_nested().unbind()] == [[2.5, 3.5], [4.5]]
    assert tail.to_padded().values.tolist() == [[2.5, 3.5], [4.5, 0]]
    # Only empty rows, and no rows at all.
    empty = recordwire.Ragged(np.zeros(0, dtype=np.int64), np.array([0, 0, 0]))
    assert empty.to_padded().values.shape == (2, 0) and empty.to_padded().lengths.tolist() == [0, 0]
    assert [t.tolist() for t in empty.to_nested().unbind()] == [[], []]
    none = recordwire.Ragged(np.zeros(0, dtype=np.int64), np.array([0]))
    assert none.to_padded().values.shape == (0, 0) and len(none.to_nested().unbind()) == 0
    with pytest.raises(TypeError, match="bytes"):
        recordwire.Ragged([b"a"], np.array([0, 1])).to_padded()
    with pytest.raises(TypeError, match="bytes"):
        recordwire.Ragged([b"a"], np.array([0, 1])).to_nested()
