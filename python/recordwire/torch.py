"""PyTorch adapters: a map-style dataset, a distributed sampler, an
iterable dataset that shards each rank's order across DataLoader workers
and yields batches decoded in Rust, and a collate function for records with
variable-length features.

The two datasets batch differently:

- ``MapDataset(paths, spec=...)`` gives one record per index, and the
  ``DataLoader`` batches them: ``DataLoader(ds, batch_size=256)`` (with
  ``collate_fn=recordwire.torch.collate`` when the spec has var_len
  features). Its ``__getitems__`` decodes a whole batch of indices in one
  call into Rust.
- ``IterableDataset(paths, spec=..., batch_size=256)`` yields whole batches,
  so the ``DataLoader`` must not batch them again:
  ``DataLoader(ds, batch_size=None)``. With the DataLoader's own
  ``batch_size`` (``1`` by default) it raises ``ValueError`` at the first
  batch, saying so.

Importing this module imports ``torch``; nothing else in recordwire does.

Processes: a ``DataLoader`` worker never uses a dataset object opened in
another process. Each adapter keeps the ``Dataset``'s arguments and opens it
lazily in the process that reads (a forked worker opens its own map, and a
spawned one unpickles only the arguments).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Union

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import Dataset as _TorchDataset
from torch.utils.data import IterableDataset as _TorchIterable
from torch.utils.data import Sampler as _TorchSampler
from torch.utils.data import get_worker_info

from recordwire._columns import Bytes, Padded, Ragged, RaggedFrames, Sparse
from recordwire._dataset import Dataset, Lazy, as_spec, portable
from recordwire._loader import LoadedBatch
from recordwire._loader import Loader as _Loader

__all__ = [
    "MapDataset",
    "DistributedSampler",
    "IterableDataset",
    "Loader",
    "Batch",
    "Records",
    "collate",
    "to_torch",
    "rank_world",
]


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


def _split(column: Any, n: int, in_worker: bool) -> List[Any]:
    """The ``n`` rows of a decoded column (numpy, as ``Dataset.decode``
    gives it), each as one record's value: tensors are views of the batch's
    buffers (no copy); bytes values ``bytes`` (or, borrowed outside a worker,
    ``memoryview``s), a list of them where a record has several."""
    if isinstance(column, np.ndarray):
        if n == 1:  # ds[i]: cheaper than unbind
            return [torch.from_numpy(column.reshape(column.shape[1:]))]
        return list(torch.from_numpy(column).unbind(0))
    if isinstance(column, Bytes):
        column = column.to_list()
    if isinstance(column, list):
        values = to_torch(column, in_worker)
        if n == 0:
            return []
        k = len(values) // n
        return list(values) if k == 1 else [values[r * k : (r + 1) * k] for r in range(n)]
    if isinstance(column, Ragged):
        splits = np.asarray(column.row_splits, dtype=np.int64)
        if isinstance(column.values, np.ndarray):
            return list(torch.tensor_split(torch.from_numpy(column.values), torch.from_numpy(splits[1:-1])))
        values = column.values.to_list() if isinstance(column.values, Bytes) else to_torch(column.values, in_worker)
        return [values[splits[r] : splits[r + 1]] for r in range(n)]
    if isinstance(column, Padded):
        lengths = column.lengths.tolist()
        rows = _split(column.values, n, in_worker)
        return [row[:length] for row, length in zip(rows, lengths)]
    if isinstance(column, RaggedFrames):
        rows = _split(Ragged(column.values, column.frame_splits), len(column.frame_splits) - 1, in_worker)
        splits = column.row_splits.tolist()
        return [rows[splits[r] : splits[r + 1]] for r in range(n)]
    if isinstance(column, Sparse):
        if not isinstance(column.values, np.ndarray):
            raise TypeError("a sparse bytes column has no per-record form: decode it as var_len")
        tensor = to_torch(column)
        return [tensor[r] for r in range(n)]
    if isinstance(column, dict):
        parts = {k: _split(v, n, in_worker) for k, v in column.items()}
        return [{k: v[r] for k, v in parts.items()} for r in range(n)]
    raise TypeError(f"no per-record form for a column of type {type(column).__name__}")


def _records(columns: Dict[str, Any], n: int) -> List[Dict[str, Any]]:
    """The ``n`` records of a decoded batch."""
    parts = {k: _split(v, n, get_worker_info() is not None) for k, v in columns.items()}
    return [{k: v[r] for k, v in parts.items()} for r in range(n)]


class Records(list):
    """What ``MapDataset.__getitems__`` returns: a list of records (dicts of
    tensors), as any ``collate_fn`` expects, which also carries the batch
    they were split from (``columns``, numpy, as ``Dataset.decode`` gives
    it; ``None`` when a ``transform`` made the records), so that
    ``collate`` takes the columns as they are instead of stacking the
    records again.

    Made from ``columns``, the records are split from them on first use
    (``len`` excepted): ``collate`` never needs them, and splitting is a
    third of a var_len batch's time."""

    columns: Optional[Dict[str, Any]] = None
    _pending: Optional[Callable[[], List[Any]]] = None
    _n = 0

    @classmethod
    def lazy(cls, columns: Dict[str, Any], n: int, split: Callable[[], List[Any]]) -> "Records":
        out = cls()
        out.columns, out._n, out._pending = columns, n, split
        return out

    def _fill(self) -> None:
        if self._pending is not None:
            split, self._pending = self._pending, None
            list.extend(self, split())

    def __len__(self) -> int:
        return self._n if self._pending is not None else list.__len__(self)

    def __getstate__(self) -> Dict[str, Any]:
        self._fill()
        return {"columns": self.columns}


def _filling(name: str) -> Any:
    method = getattr(list, name)

    def filled(self: Records, *args: Any, **kwargs: Any) -> Any:
        self._fill()
        return method(self, *args, **kwargs)

    filled.__name__ = name
    return filled


# Every other way to look into or change the list splits the records first.
for _name in (
    "__getitem__", "__iter__", "__reversed__", "__contains__", "__eq__", "__ne__", "__lt__", "__le__",
    "__gt__", "__ge__", "__repr__", "__add__", "__mul__", "__rmul__", "__iadd__", "__imul__",
    "__setitem__", "__delitem__", "__reduce_ex__", "append", "extend", "insert", "pop", "remove",
    "clear", "copy", "count", "index", "reverse", "sort",
):
    setattr(Records, _name, _filling(_name))


class MapDataset(_TorchDataset):
    """Map-style: ``ds[i]`` is record ``i`` as a dict (``transform`` applied
    when given), or, with ``spec``, the record decoded by it as a dict of
    tensors without a batch dimension (a ``FixedLen(784)`` feature is
    ``[784]``; a var_len one a 1-D tensor of the record's values; bytes are
    ``bytes``).

    The ``DataLoader`` batches the records: with a ``batch_size`` it asks
    ``__getitems__`` for a whole batch of indices, decoded in one call into
    Rust. Var_len features need ``collate_fn=recordwire.torch.collate``
    (PyTorch's default collate stacks only equal shapes)::

        loader = DataLoader(MapDataset(path, spec=spec), batch_size=256,
                            shuffle=True, collate_fn=recordwire.torch.collate)
        for batch in loader:
            batch["image"]           # [256, 784]
            batch["tokens"].values   # [256, longest], .lengths [256]
    """

    def __init__(
        self, paths: Any, *, spec: Any = None, transform: Optional[Callable[[Any], Any]] = None, **open_args: Any
    ) -> None:
        self._lazy = Lazy(paths, **open_args)
        self._spec_text = _spec_text(spec)
        self._transform = transform

    def __len__(self) -> int:
        return len(self._lazy.dataset)

    def __getitem__(self, i: int) -> Any:
        if self._spec_text is None:
            item = _record(self._lazy.dataset[i])
        else:
            item = _records(self._lazy.dataset.decode([i], self._spec_text), 1)[0]
        return self._transform(item) if self._transform else item

    def __getitems__(self, indices: Sequence[int]) -> Records:
        """Records ``indices``, decoded by the spec in one call (what the
        ``DataLoader`` calls for each batch when it has a ``batch_size``):
        the same records as ``[ds[i] for i in indices]``, as ``Records``."""
        ds = self._lazy.dataset
        if self._spec_text is None:
            out = Records(_record(ds[int(i)]) for i in indices)
        else:
            columns = ds.decode(np.asarray(indices, dtype=np.int64), self._spec_text)
            out = Records.lazy(columns, len(indices), functools.partial(_records, columns, len(indices)))
        if self._transform is not None:
            out = Records(self._transform(item) for item in out)
        return out


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
    ``DataLoader(dataset, batch_size=None)``.

    Pickled in a DataLoader worker (to cross to the main process), a batch
    puts all its arrays into one block of shared memory and sends that
    block with where each array lies in it: the main process maps one
    block per batch and rebuilds the columns as views of it. Torch would
    otherwise move each tensor into a shared-memory block of its own and
    hand over a file descriptor per tensor (each a round trip to a thread
    of the worker)."""

    def __reduce__(self) -> Any:
        if get_worker_info() is None:
            return (Batch, (dict(self),))
        arrays: List[Any] = []
        skeleton = {k: _map_leaves(v, lambda x: _pack(x, arrays)) for k, v in self.items()}
        if not arrays:
            return (Batch, (dict(self),))
        return (_unpack, (*_packed(arrays), skeleton))


class _Slot(NamedTuple):
    """Where a packed array was: its place in the packed list, and whether
    it was a numpy array (else a tensor)."""

    at: int
    numpy: bool


def _map_leaves(value: Any, f: Callable[[Any], Any]) -> Any:
    """``value`` with ``f`` applied to each leaf: the same dicts (a
    ``LoadedBatch`` keeps its ids) and column tuples (``Ragged``, ``Bytes``,
    ...) around what ``f`` makes of the arrays, tensors and other values
    in them."""
    if isinstance(value, LoadedBatch):
        return value._with({k: _map_leaves(v, f) for k, v in value.items()})
    if isinstance(value, dict):
        return {k: _map_leaves(v, f) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields") and not isinstance(value, _Slot):
        return type(value)(*(_map_leaves(v, f) for v in value))
    return f(value)


def _pack(value: Any, arrays: List[Any]) -> Any:
    """A leaf of a batch: a dense CPU tensor or numeric numpy array is
    appended to ``arrays`` (as a contiguous tensor) and replaced by its
    ``_Slot``; anything else stays."""
    if isinstance(value, torch.Tensor) and value.layout == torch.strided and value.device.type == "cpu":
        arrays.append(value.contiguous())
        return _Slot(len(arrays) - 1, False)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        arrays.append(torch.from_numpy(np.ascontiguousarray(value)))
        return _Slot(len(arrays) - 1, True)
    return value


def _packed(arrays: List[Any]) -> Any:
    """The arrays copied into one block of shared memory (a 1-D uint8
    tensor, which torch sends as one file descriptor) and where each lies
    in it: ``(block, places)``, each place ``(offset, bytes, dtype, shape)``,
    offsets 64-byte aligned."""
    places, total = [], 0
    for t in arrays:
        n = t.numel() * t.element_size()
        places.append((total, n, t.dtype, tuple(t.shape)))
        total += (n + 63) // 64 * 64
    block = torch.empty(0, dtype=torch.uint8).set_(torch.UntypedStorage._new_shared(max(total, 1)))
    for t, view in zip(arrays, _views(block, places)):
        view.copy_(t)
    return block, places


def _views(block: Any, places: List[tuple]) -> List[Any]:
    """The tensors at ``places`` of ``block`` (see ``_packed``)."""
    return [block[at : at + n].view(dtype).view(shape) for at, n, dtype, shape in places]


def _unpack(block: Any, places: List[tuple], skeleton: Dict[str, Any]) -> "Batch":
    """A batch of ``Batch.__reduce__``: its arrays as views of ``block``."""
    views = _views(block, places)

    def fill(value: Any) -> Any:
        if isinstance(value, _Slot):
            t = views[value.at]
            return t.numpy() if value.numpy else t
        return value

    return Batch({k: _map_leaves(v, fill) for k, v in skeleton.items()})


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


def _collate_values(values: List[Any], ragged: str, pad_value: Any) -> Any:
    """One feature's values across a batch of records."""
    first = values[0]
    if isinstance(first, Mapping):
        return {k: _collate_values([v[k] for v in values], ragged, pad_value) for k in first}
    if isinstance(first, (torch.Tensor, np.ndarray)):
        tensors = [torch.as_tensor(v) for v in values]
        if all(t.shape == tensors[0].shape for t in tensors):
            return torch.stack(tensors)
        if ragged == "nested":
            # Shapes differ, so each has a first dimension. Values and offsets,
            # as Ragged.to_nested builds it (one copy, the concatenation):
            # `as_nested_tensor(list, layout=torch.jagged)` aborts the process
            # when TensorFlow is loaded in it too (torch 2.15, tf 2.21).
            offsets = torch.tensor([0] + [len(t) for t in tensors], dtype=torch.int64).cumsum(0)
            return torch.nested.nested_tensor_from_jagged(torch.cat(tensors), offsets=offsets)
        lengths = torch.tensor([len(t) for t in tensors], dtype=torch.int64)
        padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
        return Padded(padded, lengths)  # type: ignore[arg-type]  # of tensors, as to_torch makes them
    if isinstance(first, (bool, int, float)):
        return torch.tensor(values)
    return list(values)


def _collate_column(column: Any, n: int, ragged: str, pad_value: Any, in_worker: bool) -> Any:
    """A decoded batch column of ``n`` rows as ``collate`` gives it."""
    if isinstance(column, Ragged) and isinstance(column.values, np.ndarray):
        if ragged == "nested":
            return column.to_nested()
        return to_torch(column.to_padded(pad_value), in_worker)
    if isinstance(column, (Ragged, Bytes, list)):
        return _split(column, n, in_worker)
    if isinstance(column, dict):
        return {k: _collate_column(v, n, ragged, pad_value, in_worker) for k, v in column.items()}
    return to_torch(column, in_worker)


def collate(batch: Sequence[Any], *, ragged: str = "pad", pad_value: Any = 0) -> Any:
    """Batches records (dicts) for a ``DataLoader``, variable-length
    features included: ``DataLoader(MapDataset(paths, spec=spec),
    batch_size=32, collate_fn=recordwire.torch.collate)``.

    A feature whose records have equal shapes is stacked (``[batch,
    *shape]``). A var_len feature (or, for records that did not come from
    ``MapDataset``, any tensor feature whose shapes differ) becomes, by
    ``ragged``:

    - ``"pad"``: ``Padded(values, lengths)``, ``values`` ``[batch, longest,
      ...]`` padded with ``pad_value``, ``lengths`` ``[batch]`` (int64);
    - ``"nested"``: a ``torch.nested`` tensor (jagged layout) of the rows.

    Bytes features are lists (of ``bytes``, or of lists for several values
    per record); numbers become tensors. With ``functools.partial`` for the
    options::

        collate_fn = functools.partial(recordwire.torch.collate, ragged="nested")

    Records from ``MapDataset.__getitems__`` (``Records``) carry the batch
    they were decoded as, which is used as it is: a var_len feature is
    ``Padded`` or nested even when its lengths happen to be equal, and
    fixed-length columns are the decoder's buffers (no copy).
    """
    if ragged not in ("pad", "nested"):
        raise ValueError(f"ragged={ragged!r}: expected 'pad' or 'nested'")
    if isinstance(batch, Mapping):
        raise TypeError(
            "recordwire.torch.collate batches a list of records and got one record (a dict): "
            "the DataLoader has batch_size=None; give it a batch_size, or no collate_fn"
        )
    columns = getattr(batch, "columns", None)
    if columns is not None:
        in_worker = get_worker_info() is not None
        return {k: _collate_column(v, len(batch), ragged, pad_value, in_worker) for k, v in columns.items()}
    if len(batch) == 0:
        raise ValueError("recordwire.torch.collate: an empty batch")
    if not isinstance(batch[0], Mapping):
        raise TypeError(f"recordwire.torch.collate batches records (dicts), got {type(batch[0]).__name__}")
    return _collate_values(list(batch), ragged, pad_value)


class Loader(_Loader):
    """``recordwire.Loader`` yielding tensors: each batch's numpy arrays as
    tensors over the same pooled memory (``torch.from_numpy``, no copy),
    bytes columns as they are. Rank and world default to
    ``torch.distributed``'s.

    ``pin_memory=True`` copies each batch's tensors into pinned (page-locked)
    host memory, and ``device=`` (``"cuda"``, ``"cuda:1"``, a
    ``torch.device``) copies them to that device with ``non_blocking``
    copies (asynchronous from pinned memory): both on the loader's
    transform threads, ahead of the training step, with the batch's
    ``transform`` (if any) run first, on the CPU tensors. Without CUDA,
    ``pin_memory`` and a CUDA ``device`` raise ``RuntimeError`` at once.

    >>> loader = recordwire.torch.Loader("train-*.tfrecord", spec, batch_size=256,
    ...                                  pin_memory=True, device="cuda")  # doctest: +SKIP
    >>> for batch in loader:  # doctest: +SKIP
    ...     loss = model(batch["image"], batch["label"])  # tensors on the GPU
    """

    def __init__(
        self,
        data: Any,
        spec: Any = "auto",
        batch_size: int = 256,
        *,
        pin_memory: bool = False,
        device: Optional[Union[str, torch.device]] = None,
        non_blocking: bool = True,
        **kwargs: Any,
    ) -> None:
        if kwargs.get("to", "numpy") != "numpy":
            raise ValueError("recordwire.torch.Loader yields tensors: to= is not an option")
        self.device = torch.device(device) if device is not None else None
        self.pin_memory = bool(pin_memory)
        self.non_blocking = bool(non_blocking)
        if (self.pin_memory or (self.device is not None and self.device.type == "cuda")) and not torch.cuda.is_available():
            raise RuntimeError("pin_memory=True and device='cuda' need CUDA, which torch does not find here")
        super().__init__(data, spec, batch_size, **kwargs)

    def _make(self, item: Any) -> Any:
        batch = super()._make(item)
        return batch._with(to_torch(dict(batch)))

    def _stages(self) -> List[Callable[[Any], Any]]:
        stages = super()._stages()
        if self.pin_memory:
            stages.append(lambda b: _map_leaves(b, lambda t: t.pin_memory() if isinstance(t, torch.Tensor) else t))
        if self.device is not None:
            device, non_blocking = self.device, self.non_blocking and self.pin_memory
            to = lambda t: t.to(device, non_blocking=non_blocking) if isinstance(t, torch.Tensor) else t  # noqa: E731
            stages.append(lambda b: _map_leaves(b, to))
        return stages
