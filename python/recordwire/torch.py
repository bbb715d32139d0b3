"""PyTorch adapters: a map-style dataset, a distributed sampler, and an
iterable dataset that shards each rank's order across DataLoader workers
and yields batches decoded in Rust.

Importing this module imports ``torch``; nothing else in recordwire does.

Processes: a ``DataLoader`` worker never uses a dataset object opened in
another process. Each adapter keeps the ``Dataset``'s arguments and opens it
lazily in the process that reads (a forked worker opens its own map, and a
spawned one unpickles only the arguments).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Union

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import Dataset as _TorchDataset
from torch.utils.data import IterableDataset as _TorchIterable
from torch.utils.data import Sampler as _TorchSampler
from torch.utils.data import get_worker_info

from recordwire._columns import Bytes, Padded, Ragged, RaggedFrames, Sparse
from recordwire._dataset import Dataset, Lazy, as_spec, portable

__all__ = ["MapDataset", "DistributedSampler", "IterableDataset", "Batch", "to_torch", "rank_world"]


def rank_world(rank: Optional[int] = None, world: Optional[int] = None) -> tuple:
    """``(rank, world)``: as given, else from ``torch.distributed`` when it is
    initialised, else ``(0, 1)``."""
    if rank is None or world is None:
        if dist.is_available() and dist.is_initialized():
            rank = dist.get_rank() if rank is None else rank
            world = dist.get_world_size() if world is None else world
        else:
            rank = 0 if rank is None else rank
            world = 1 if world is None else world
    return int(rank), int(world)


def to_torch(column: Any, in_worker: bool = False) -> Any:
    """A decoded column with its numpy arrays as tensors (no copy:
    ``torch.from_numpy``). Bytes are left as they are, except that in a
    DataLoader worker (``in_worker``) memoryviews into the file become
    ``bytes``: a view cannot cross to the main process by itself, and
    pickling it would send the whole mapped file."""
    if isinstance(column, np.ndarray):
        return torch.from_numpy(column)
    if isinstance(column, list):
        return [bytes(v) if in_worker and isinstance(v, memoryview) else v for v in column]
    if isinstance(column, (Ragged, RaggedFrames, Padded)):
        return type(column)(*(to_torch(x, in_worker) for x in column))
    if isinstance(column, Sparse):
        return torch.sparse_coo_tensor(
            torch.from_numpy(column.indices.T.copy()), to_torch(column.values, in_worker), column.dense_shape
        ) if isinstance(column.values, np.ndarray) else column
    if isinstance(column, dict):
        return {k: to_torch(v, in_worker) for k, v in column.items()}
    return column


def _record(record: Dict[str, Any]) -> Dict[str, Any]:
    """A record dict as it can leave a DataLoader worker (see ``to_torch``)."""
    if get_worker_info() is None:
        return record
    return portable(record)


def _spec_text(spec: Any) -> Any:
    """The spec in a form that pickles (a ``Spec`` as its JSON text)."""
    if spec is None:
        return None
    spec = as_spec(spec)
    return spec.to_json() if hasattr(spec, "to_json") else spec


class MapDataset(_TorchDataset):
    """Map-style: ``ds[i]`` is record ``i`` as a dict (``transform`` applied
    when given), or, with ``spec``, the record decoded by it (a batch of one,
    tensors)."""

    def __init__(
        self, paths: Any, *, spec: Any = None, transform: Optional[Callable[[Any], Any]] = None, **open_args: Any
    ) -> None:
        self._lazy = Lazy(paths, **open_args)
        self._spec_text = _spec_text(spec)
        self._transform = transform

    def __len__(self) -> int:
        return len(self._lazy.dataset)

    def __getitem__(self, i: int) -> Any:
        ds = self._lazy.dataset
        in_worker = get_worker_info() is not None
        item = _record(ds[i]) if self._spec_text is None else to_torch(ds.decode([i], self._spec_text), in_worker)
        return self._transform(item) if self._transform else item


class DistributedSampler(_TorchSampler):
    """Record ids for this rank: recordwire's orders (the CLI's ``order``),
    with rank and world from ``torch.distributed`` when initialised;
    ``set_epoch(e)`` before each epoch, as with PyTorch's sampler."""

    def __init__(
        self,
        dataset: Union[MapDataset, Dataset],
        *,
        mode: str = "shuffle",
        seed: int = 0,
        rank: Optional[int] = None,
        world: Optional[int] = None,
        tail: str = "pad",
        **order: Any,
    ) -> None:
        self._ds = dataset._lazy.dataset if isinstance(dataset, MapDataset) else dataset
        self.rank, self.world = rank_world(rank, world)
        self._kw = dict(mode=mode, seed=seed, rank=self.rank, world=self.world, tail=tail, **order)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self._ds._order(**self._kw))

    def __iter__(self) -> Iterator[int]:
        return iter(self._ds.order(epoch=self.epoch, **self._kw).tolist())


class Batch(dict):
    """A batch of ``IterableDataset`` (a dict name -> column of tensors).

    It is already a batch: a ``DataLoader`` that batches again (its
    ``batch_size`` is 1 unless given) stacks batches into a leading
    dimension or fails in torch's collate. Torch's ``default_collate``
    dispatches on the type of the first element through
    ``default_collate_fn_map``, where this module registers ``Batch`` with a
    function that raises ``ValueError`` naming the fix:
    ``DataLoader(dataset, batch_size=None)``."""


def _refuse_batch(batch: Sequence[Any], *, collate_fn_map: Any = None) -> Any:
    raise ValueError(
        f"the DataLoader is batching {len(batch)} batches of recordwire.torch.IterableDataset, which "
        "yields whole batches (its own batch_size): give the DataLoader batch_size=None, "
        "as in DataLoader(dataset, batch_size=None, num_workers=...)"
    )


try:  # torch >= 1.13: default_collate looks element types up here first
    from torch.utils.data._utils.collate import default_collate_fn_map as _collate_map

    _collate_map[Batch] = _refuse_batch
except ImportError:  # pragma: no cover - older torch: the docstrings say it
    pass


class IterableDataset(_TorchIterable):
    """This rank's order (shuffled per epoch), split across the DataLoader's
    workers (``get_worker_info()``): each id of the rank exactly once per
    epoch. Yields records (dicts), or, with ``spec`` and ``batch_size``,
    whole batches decoded in Rust as ``Batch`` dicts of tensors
    (``threads`` decoder threads per worker).

    The batches are made here, so the ``DataLoader`` must not batch again:
    give it ``batch_size=None``. ``DataLoader(ds)`` (whose ``batch_size`` is
    1) or ``DataLoader(ds, batch_size=64)`` raise ``ValueError`` at the
    first batch::

        ds = IterableDataset(path, spec=spec, batch_size=256, seed=0)
        loader = DataLoader(ds, batch_size=None, num_workers=4)
        for epoch in range(3):
            ds.set_epoch(epoch)
            for batch in loader:
                batch["image"]  # [256, 784]

    ``set_epoch(e)``; ``state_dict()``/``load_state_dict()`` resume
    mid-epoch with ``num_workers`` 0 or 1 (with more workers a mid-epoch
    state raises ``RuntimeError``: resume at an epoch boundary instead).
    """

    def __init__(
        self,
        paths: Any,
        *,
        spec: Any = None,
        batch_size: Optional[int] = None,
        mode: str = "shuffle",
        seed: int = 0,
        rank: Optional[int] = None,
        world: Optional[int] = None,
        tail: str = "pad",
        drop_last: bool = False,
        threads: int = 1,
        **open_args: Any,
    ) -> None:
        if (spec is None) != (batch_size is None):
            raise ValueError("spec and batch_size go together")
        self._lazy = Lazy(paths, **open_args)
        self._spec_text = _spec_text(spec)
        self.batch_size = batch_size
        self.rank, self.world = rank_world(rank, world)
        self._order = dict(mode=mode, seed=seed, rank=self.rank, world=self.world, tail=tail)
        self.drop_last = drop_last
        self.threads = threads
        self.epoch = 0
        self._position = 0
        self._resume: Optional[int] = None

    def set_epoch(self, epoch: int) -> None:
        self.epoch, self._position, self._resume = epoch, 0, None

    def _ids(self) -> np.ndarray:
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        ds = self._lazy.dataset
        return ds.order(epoch=self.epoch, worker=worker, workers=workers, **self._order)

    def __iter__(self) -> Iterator[Any]:
        ds = self._lazy.dataset
        ids = self._ids()
        start = self._resume or 0
        self._resume = None
        info = get_worker_info()
        if start and info is not None and info.num_workers > 1:
            # A position counts ids of one reader's order; split across
            # workers it would skip the wrong ones.
            raise RuntimeError(
                "resuming mid-epoch (load_state_dict) needs num_workers=0 or 1; "
                "with more workers, resume at an epoch boundary (set_epoch)"
            )
        step = self.batch_size or 1
        in_worker = get_worker_info() is not None
        for at in range(start, len(ids), step):
            chunk = ids[at : at + step]
            if self.batch_size is not None and self.drop_last and len(chunk) < self.batch_size:
                break
            self._position = at + len(chunk)
            if self.batch_size is None:
                yield _record(ds[int(chunk[0])])
            else:
                yield Batch(to_torch(ds.decode(chunk, self._spec_text, threads=self.threads), in_worker))

    def state_dict(self) -> Dict[str, Any]:
        return {"epoch": self.epoch, "position": self._position, "order": dict(self._order)}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        if dict(state["order"]) != self._order:
            raise ValueError(f"the state is of another order: {state['order']}")
        self.epoch, self._position = int(state["epoch"]), int(state["position"])
        self._resume = self._position
