"""recordwire.torch.Loader: tensors over the pooled batch memory (no copy,
reused across epochs); two ranks of a gloo group get disjoint, complete,
equal-length epochs; pin_memory and device= where CUDA exists (skipped
with the reason where it does not: the one skip the suite allows)."""

import numpy as np
import pytest

import recordwire

torch = pytest.importorskip("torch", reason="torch is installed by ./test.sh and .ci/run: it must not be missing there")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import recordwire.torch as rwt  # noqa: E402
from conftest import check_rank_ids, free_port, save_rank_ids  # noqa: E402

N = 120
SPEC = {
    "id": recordwire.FixedLen((), "int64"),
    "x": recordwire.FixedLen(3, "float32"),
    "tokens": recordwire.VarLen("int64"),
}


@pytest.fixture(scope="module")
def ids_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("torch_loader") / "ids.tfrecord"
    with recordwire.Writer(path) as w:
        for i in range(N):
            w.write(
                {
                    "id": i,
                    "x": np.full(3, i, dtype=np.float32),
                    "tokens": np.arange(i % 4, dtype=np.int64),
                    "name": f"r{i}".encode(),
                }
            )
    return str(path)


def test_batches_are_tensors_over_the_pool(ids_file):
    loader = rwt.Loader(ids_file, SPEC, 16, seed=1, threads=2, prefetch=2)
    ds = recordwire.Dataset(ids_file)
    order = ds.order(seed=1)
    pointers = []
    for epoch in range(3):
        ptrs = set()
        for k, batch in enumerate(loader):
            assert isinstance(batch["id"], torch.Tensor) and batch["id"].dtype == torch.int64
            assert batch["id"].tolist() == ds.order(seed=1, epoch=epoch)[16 * k : 16 * (k + 1)].tolist()
            assert torch.equal(batch["x"][:, 0].to(torch.int64), batch["id"])
            tokens = batch["tokens"]
            assert isinstance(tokens, recordwire.Ragged) and isinstance(tokens.values, torch.Tensor)
            assert batch.ids.tolist() == batch["id"].tolist()
            ptrs.add(batch["x"].data_ptr())
        pointers.append(ptrs)
    assert order.tolist() == ds.order(seed=1, epoch=0).tolist()
    # Warm epochs decode into the same pooled buffers: no new memory, and
    # the tensors are those buffers (a copy would have fresh addresses).
    assert pointers[2] <= pointers[0] | pointers[1], "a warm epoch's tensors are not in pooled memory"
    assert loader.pool_stats()["made"] <= 2 + 2 + 2


def _rank_main(rank, world, port, path, out_dir):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        loader = rwt.Loader(path, SPEC, 8, seed=5, threads=2)
        assert (loader.rank, loader.world) == (rank, world)
        save_rank_ids(out_dir, rank, [i for b in loader for i in b["id"].tolist()])
    finally:
        dist.destroy_process_group()


def test_two_ranks_in_a_gloo_group(ids_file, tmp_path):
    world = 2
    mp.spawn(_rank_main, args=(world, free_port(), ids_file, str(tmp_path)), nprocs=world, join=True)
    check_rank_ids(tmp_path, world, N)


def test_without_cuda_pinning_is_refused_at_once(ids_file):
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here: test_pin_memory_and_device runs instead")
    with pytest.raises(RuntimeError, match="need CUDA"):
        rwt.Loader(ids_file, SPEC, 8, pin_memory=True)
    with pytest.raises(RuntimeError, match="need CUDA"):
        rwt.Loader(ids_file, SPEC, 8, device="cuda")
    # A CPU device is fine, and a transform runs on the CPU tensors first.
    loader = rwt.Loader(ids_file, SPEC, 8, device="cpu", transform=lambda b: {**b, "twice": b["x"] * 2})
    batch = next(iter(loader))
    assert torch.equal(batch["twice"], batch["x"] * 2)


def test_pin_memory_and_device(ids_file):
    if not torch.cuda.is_available():
        pytest.skip("CUDA is not available here (no GPU): pin_memory and device='cuda' are checked on a GPU machine")
    loader = rwt.Loader(ids_file, SPEC, 16, seed=2, pin_memory=True, device="cuda", threads=2)
    seen = []
    for batch in loader:
        assert batch["id"].is_cuda and batch["x"].device.type == "cuda"
        assert isinstance(batch["tokens"], recordwire.Ragged) and batch["tokens"].values.is_cuda
        assert torch.equal(batch["x"][:, 0].to(torch.int64), batch["id"])
        seen.extend(batch["id"].cpu().tolist())
    assert sorted(seen) == list(range(N))
    pinned = rwt.Loader(ids_file, SPEC, 16, pin_memory=True)
    batch = next(iter(pinned))
    assert batch["x"].is_pinned() and not batch["x"].is_cuda


def test_worker_batches_cross_in_one_shared_block(ids_file):
    """A batch from a DataLoader worker arrives as views of one shared
    block (one hand-over per batch), with the values ds.decode gives."""
    from torch.utils.data import DataLoader

    spec = dict(SPEC, name=recordwire.FixedLen((), "bytes"))
    data = rwt.IterableDataset(ids_file, spec=spec, batch_size=16, seed=3)
    ds = recordwire.Dataset(ids_file)
    seen = []
    for batch in DataLoader(data, batch_size=None, num_workers=2):
        assert isinstance(batch, rwt.Batch)
        tensors = [batch["id"], batch["x"], batch["tokens"].values, batch["tokens"].row_splits]
        assert all(t.is_shared() for t in tensors)
        assert len({t.untyped_storage().data_ptr() for t in tensors}) == 1, "not one block"
        ref = ds.decode(batch["id"].numpy(), spec)
        assert np.array_equal(batch["x"].numpy(), ref["x"])
        assert np.array_equal(batch["tokens"].values.numpy(), ref["tokens"].values)
        assert np.array_equal(batch["tokens"].row_splits.numpy(), ref["tokens"].row_splits)
        name = batch["name"]
        assert np.array_equal(np.asarray(name.data), ref["name"].data)
        assert np.array_equal(np.asarray(name.offsets), ref["name"].offsets)
        seen.extend(batch["id"].tolist())
    assert sorted(seen) == list(range(N))
