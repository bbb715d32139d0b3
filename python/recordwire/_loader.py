"""``recordwire.Loader``: batches read and decoded ahead on Rust threads.

A thin layer over the native loader (the crate's ``recordwire::loader``):
the native side cuts each epoch's order into batches, reads and decodes
them on its threads into a pool of reused buffers, and hands them over in
order; ``__next__`` waits for the next one with the GIL released. This
module adds the Python-side pieces: opening the data, rank and world from
``torch.distributed``, the column types, ``state_dict``, and ``transform``
callables run on a pool of Python threads.
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
import sys
from typing import Any, Callable, Deque, Dict, Iterator, List, Literal, Mapping, Optional, Tuple

import numpy as np

from recordwire import _columns
from recordwire._dataset import Dataset, as_spec
from recordwire._native import Loader as _NativeLoader

__all__ = ["Loader", "LoadedBatch"]


class _PathLoader:
    """The loader's threads for a dataset of any message read by field paths
    (``Loader(ds, columns=[...])``): the same interface as the native loader
    (batches of an epoch's order, decoded ahead, resumable), with each
    batch decoded by ``Dataset.decode(ids, paths)``'s native call (the GIL
    released) on a pool of ``threads`` Python threads, ``prefetch`` batches
    ahead."""

    def __init__(
        self,
        dataset: Dataset,
        paths: List[str],
        batch_size: int,
        *,
        drop_last: bool,
        prefetch: int,
        threads: int,
        enum_names: bool,
        **order: Any,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._ds = dataset
        self._paths = paths
        self._batch = batch_size
        self._drop_last = drop_last
        self._ahead = max(1, prefetch)
        self._threads = max(1, threads)
        self._enum_names = enum_names
        self._order = order
        # Checked at once: a wrong path fails here, not in a thread.
        dataset._decode_paths(np.zeros(0, dtype=np.int64), paths, enum_names=enum_names)
        self._epoch, self._next = 0, 0
        self._ids: Optional[np.ndarray] = None
        self._pending: Deque[Tuple[int, "concurrent.futures.Future[Any]"]] = collections.deque()
        self._pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
        self._waited = 0.0

    def _epoch_ids(self) -> np.ndarray:
        if self._ids is None:
            self._ids = np.asarray(self._ds.order(epoch=self._epoch, **self._order), dtype=np.int64)
        return self._ids

    def __len__(self) -> int:
        n = len(self._epoch_ids())
        return n // self._batch if self._drop_last else -(-n // self._batch)

    def _batch_ids(self, index: int) -> np.ndarray:
        return self._epoch_ids()[index * self._batch : (index + 1) * self._batch]

    def _fill(self) -> None:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(self._threads, thread_name_prefix="recordwire-paths")
        n = len(self)
        start = self._pending[-1][0] + 1 if self._pending else self._next
        for index in range(start, min(n, self._next + self._ahead)):
            ids = self._batch_ids(index)
            self._pending.append(
                (index, self._pool.submit(self._ds._decode_paths, ids, self._paths, enum_names=self._enum_names))
            )

    def next_batch(self) -> Optional[Tuple[Any, ...]]:
        if self._next >= len(self):
            self.set_epoch(self._epoch + 1)
            return None
        self._fill()
        index, future = self._pending.popleft()
        ids = self._batch_ids(index)
        import time

        t = time.perf_counter()
        try:
            batch = future.result()
        finally:
            self._waited += time.perf_counter() - t
            self._next = index + 1
        return (self._epoch, index, ids, batch)

    def _drop(self) -> None:
        for _, f in self._pending:
            f.cancel()
        self._pending.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def set_epoch(self, epoch: int) -> None:
        self.resume(epoch, 0)

    def resume(self, epoch: int, batch: int) -> None:
        self._drop()
        if epoch != self._epoch:
            self._ids = None
        self._epoch, self._next = int(epoch), int(batch)

    def state(self) -> Tuple[int, int]:
        return (self._epoch, self._next)

    def close(self) -> None:
        self._drop()

    def waited(self) -> float:
        return self._waited

    def running_threads(self) -> int:
        return self._threads if self._pool is not None else 0

    def pool_stats(self) -> Dict[str, int]:
        return {"made": 0, "reused": 0, "grown_bytes": 0, "dropped": 0, "free": 0}


class LoadedBatch(Dict[str, Any]):
    """One batch: a dict name -> column, the same columns as
    ``Dataset.decode`` gives for the same ids (a SequenceExample's sequence
    columns under ``"sequence"``), with where it came from: ``ids`` (int64,
    the global record ids of its rows), ``epoch`` and ``index`` (its place
    in the epoch).

    Its arrays are views of a pooled buffer of the loader (writable, no
    copy): the buffer goes back to the pool when the last array over it
    is dropped, so keeping a batch keeps its memory out of the pool (the
    pool then makes another; nothing waits).
    """

    ids: np.ndarray
    epoch: int
    index: int

    def _with(self, columns: Dict[str, Any]) -> "LoadedBatch":
        """Other columns for the same rows (``ids``, ``epoch``, ``index`` kept)."""
        out = LoadedBatch(columns)
        out.ids, out.epoch, out.index = self.ids, self.epoch, self.index
        return out


def distributed_rank_world(rank: Optional[int], world: Optional[int]) -> Tuple[int, int]:
    """``(rank, world)``: as given, else from ``torch.distributed`` when torch
    is imported and a process group is initialised, else ``(0, 1)``. Torch is
    not imported here."""
    if rank is None or world is None:
        dist = sys.modules.get("torch.distributed")
        if dist is not None and dist.is_available() and dist.is_initialized():
            rank = dist.get_rank() if rank is None else rank
            world = dist.get_world_size() if world is None else world
    return int(0 if rank is None else rank), int(1 if world is None else world)


_PAGE_MODES = ("page-aware", "quasi-random")


def _remote_order(dataset: Dataset, order: Optional[str], page_size: Optional[int], stacklevel: int) -> Tuple[str, int]:
    """The order and page size a loader of ``dataset`` uses: as given, else
    what reads each remote object's bytes about once an epoch."""
    span = dataset.span_size
    if order is None:
        order = "shuffle" if span is None else "quasi-random"
    if page_size is None:
        page_size = span if span is not None and order in _PAGE_MODES else 4096
    if span is not None and order == "shuffle":
        import warnings

        warnings.warn(
            "a full shuffle of remote objects fetches each record with a request of its own "
            f"(about {len(dataset)} requests an epoch); order='quasi-random' with page_size={span} "
            "(the default for remote data) fetches each span once",
            UserWarning,
            stacklevel=stacklevel + 1,
        )
    return order, int(page_size)


class Loader:
    """Decoded batches of a dataset's epochs, read and decoded ahead on Rust
    threads while Python works: what a training loop iterates instead of a
    ``DataLoader`` with worker processes.

    ``Loader(data, spec="auto", batch_size=256, *, order=None, seed=0,
    rank=None, world=None, worker=0, workers_split=1, workers=None,
    tail="pad", page_size=None, window=8, drop_last=False, prefetch=4,
    threads=None, to="numpy", transform=None, transform_threads=1, epoch=0,
    columns=None, enum_names=False, **open_args)``:

    - ``data``: a ``Dataset``, or what ``Dataset`` opens (a path, a glob,
      a list, ``s3://``/``gs://``/``az://``/``https://`` URLs), opened with
      ``open_args`` (``storage_options=``, ``index=``, ...).
    - ``spec``: as ``Dataset.decode`` takes it; ``"auto"`` infers it from a
      sample of the records spread over every file (``SAMPLE_RECORDS``
      records, about ``SAMPLE_BYTES``), made permissive where the sample
      cannot be sure (a feature some sampled record lacks is ``var_len``, a
      ``fixed_len`` one gets a default), and says so in a ``UserWarning``;
      ``recordwire.infer_spec(paths)`` reads every record for the exact
      spec.
    - ``order``: ``sequential``, ``shuffle``, ``page-aware`` or
      ``quasi-random`` (the page modes read cold, compressed and remote
      data page by page or span by span), with ``seed``, ``tail``,
      ``page_size`` and ``window`` as in ``Dataset.order``. The default,
      ``None``, is ``shuffle`` for local data and, where the data has
      remote objects, ``quasi-random`` over their spans (``page_size`` the
      ``span_size`` storage option, 8 MiB unless set), which fetches each
      span once an epoch (a full shuffle fetches each record with a request
      of its own: said once, as a ``UserWarning``). ``page_size`` defaults
      to the span size for remote data and 4096 otherwise; ``rank`` and
      ``world`` default to ``torch.distributed``'s when a process group is
      initialised; ``worker`` of ``workers_split`` splits a rank's part
      further (several loaders per rank).
    - ``threads``: batches decoded at once (default: the machine's cores, at
      most 8); ``workers``: batches read at once (default: ``threads`` for
      files in memory, at least 8 for remote or compressed shards, whose
      reads wait on the network or inflate); ``prefetch``: decoded batches
      kept ready ahead.
    - ``to``: ``"numpy"`` (``LoadedBatch`` dicts) or ``"arrow"``
      (``pyarrow.RecordBatch``).
    - ``columns``: for a dataset of any message (``Dataset(...,
      message=...)``), the field paths to read (default: the message's
      top-level fields), decoded as ``Dataset.decode(ids, paths)`` decodes
      them (``enum_names`` too) on ``threads`` Python threads that release
      the GIL in the native decode, ``prefetch`` batches ahead; ``spec``
      does not apply.
    - ``transform``: a callable applied to each batch on a pool of
      ``transform_threads`` Python threads, results kept in order. It
      gains from the threads when it releases the GIL (image decoding with
      PIL or ``torchvision.io``, numpy on large arrays); a pure-Python
      transform runs one at a time whatever the count.

    Iterating yields one epoch's batches in the order's sequence, then the
    loader is at the start of the next epoch (another ``for`` loop gives
    it, shuffled anew), unless ``set_epoch(e)`` says otherwise. ``break``
    stops the threads; the next loop goes on from the next batch.
    ``state_dict()``/``load_state_dict()`` resume mid-epoch exactly: the
    next batch after a resume is the one that would have come.

    Errors (a damaged record, a failed read) arrive as ``recordwire.Error``
    at the batch they belong to, after the batches before it; the threads
    stop, and the next loop goes on after the failed batch. ``close()``
    stops the threads (so does dropping the loader). A loader forked after
    its threads started refuses to go on in the child (``recordwire.Error``)
    rather than hang: make loaders after forking.

    >>> loader = Loader("train-*.tfrecord", spec, batch_size=256, seed=0)  # doctest: +SKIP
    >>> for epoch in range(3):  # doctest: +SKIP
    ...     for batch in loader:
    ...         step(batch["image"], batch["label"])
    """

    def __init__(
        self,
        data: Any,
        spec: Any = "auto",
        batch_size: int = 256,
        *,
        order: Optional[str] = None,
        seed: int = 0,
        rank: Optional[int] = None,
        world: Optional[int] = None,
        worker: int = 0,
        workers_split: int = 1,
        workers: Optional[int] = None,
        tail: str = "pad",
        page_size: Optional[int] = None,
        window: int = 8,
        drop_last: bool = False,
        prefetch: int = 4,
        threads: Optional[int] = None,
        to: Literal["numpy", "arrow"] = "numpy",
        transform: Optional[Callable[[Any], Any]] = None,
        transform_threads: int = 1,
        epoch: int = 0,
        columns: Optional[List[str]] = None,
        enum_names: bool = False,
        **open_args: Any,
    ) -> None:
        if to not in ("numpy", "arrow"):
            raise ValueError(f"to: 'numpy' or 'arrow', not {to!r}")
        if transform_threads < 1:
            raise ValueError("transform_threads must be at least 1")
        self.dataset: Dataset = data if isinstance(data, Dataset) else Dataset(data, **open_args)
        self.columns: Optional[List[str]] = None
        if self.dataset.message is not None:
            # Any message: columns by field path, the top-level fields by
            # default (a spec does not apply).
            if not (isinstance(spec, str) and spec == "auto"):
                raise ValueError("a dataset of a message is read by columns=[field paths], not by a spec")
            self.columns = list(columns) if columns is not None else list(self.dataset.message.field_names)
            spec = None
        elif columns is not None:
            raise ValueError("columns= are field paths of a message: open the dataset with message=")
        if isinstance(spec, str) and spec == "auto":
            # A sample, not every record: the first batch waits for no full
            # pass, and a damaged record raises at its batch.
            spec = self.dataset._sampled(stacklevel=2)
        self.spec = spec
        self.batch_size = int(batch_size)
        order, page_size = _remote_order(self.dataset, order, page_size, stacklevel=2)
        self.rank, self.world = distributed_rank_world(rank, world)
        self.to = to
        self.transform = transform
        self.transform_threads = int(transform_threads)
        self._order: Dict[str, Any] = dict(
            mode=order,
            seed=int(seed),
            rank=self.rank,
            world=self.world,
            worker=int(worker),
            workers=int(workers_split),
            tail=tail,
            page_size=page_size,
            window=int(window),
        )
        self.drop_last = bool(drop_last)
        self._native: Any
        if self.columns is not None:
            self._native = _PathLoader(
                self.dataset,
                self.columns,
                self.batch_size,
                drop_last=self.drop_last,
                prefetch=int(prefetch),
                threads=int(threads or min(8, os.cpu_count() or 1)),
                enum_names=bool(enum_names),
                **self._order,
            )
        else:
            self._native = _NativeLoader(
                self.dataset,
                as_spec(spec),
                self.batch_size,
                drop_last=self.drop_last,
                prefetch=int(prefetch),
                threads=int(threads or 0),
                readers=int(workers or 0),
                arrow=(to == "arrow"),
                **self._order,
            )
        # The next batch handed to the caller (the native loader may be
        # ahead of it while transforms run).
        self._state: Tuple[int, int] = (int(epoch), 0)
        if epoch:
            self._native.set_epoch(int(epoch))
        self._pool: Optional[concurrent.futures.ThreadPoolExecutor] = None

    def __len__(self) -> int:
        """Batches per epoch (this rank's part)."""
        return len(self._native)

    @property
    def epoch(self) -> int:
        """The epoch the next batch belongs to."""
        return self._state[0]

    def set_epoch(self, epoch: int) -> None:
        """Goes to the start of epoch ``epoch`` (stopping the threads)."""
        self._native.set_epoch(int(epoch))
        self._state = (int(epoch), 0)

    def state_dict(self) -> Dict[str, Any]:
        """Where the loader stands: the next batch it would hand over, with
        the order and batch size that make a state meaningful."""
        epoch, batch = self._state
        return {"epoch": epoch, "batch": batch, "batch_size": self.batch_size, "order": dict(self._order)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Resumes at ``state`` (from ``state_dict``): the next batch is the
        one that would have come next."""
        if dict(state["order"]) != self._order or int(state["batch_size"]) != self.batch_size:
            raise ValueError(
                f"the state is of another order or batch size: {dict(state['order'])}, "
                f"batch_size {state['batch_size']}"
            )
        epoch, batch = int(state["epoch"]), int(state["batch"])
        self._native.resume(epoch, batch)
        self._state = (epoch, batch)

    def close(self) -> None:
        """Stops the threads (decode and transform) and waits for them.
        Batches already handed over stay valid; the loader can go on."""
        self._native.resume(*self._state)
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def pool_stats(self) -> Dict[str, int]:
        """The batch pool's counts: ``made`` (batches made new), ``reused``
        (taken warm), ``grown_bytes`` (batch memory added by decodes),
        ``dropped`` (returned to a full pool), ``free``."""
        return dict(self._native.pool_stats())

    def waited(self) -> float:
        """Seconds the loop has spent blocked waiting for a batch the
        threads had not made yet, since the loader was made: the time the
        training step waited for data (handing over a ready batch, tens of
        microseconds, is not counted)."""
        return float(self._native.waited())

    def running_threads(self) -> int:
        """The native threads running now (0 between runs)."""
        return int(self._native.running_threads())

    def _make(self, item: Tuple[Any, ...]) -> Any:
        """The batch of the native loader's tuple."""
        if self.columns is not None:
            pa = _columns.pyarrow_module()
            batch = pa.record_batch(item[3])
            if self.to == "arrow":
                return batch
            by_path = LoadedBatch(_columns.path_columns(batch))
            by_path.epoch, by_path.index, by_path.ids = int(item[0]), int(item[1]), item[2]
            return by_path
        if self.to == "arrow":
            pa = _columns.pyarrow_module()
            return pa.record_batch(item[3])
        epoch, index, ids, _rows, context, sequence = item

        def columns(parts: Dict[str, Any]) -> Dict[str, Any]:
            # A dense numeric column comes as its array; the others as parts.
            return {name: _columns.column(p) if type(p) is dict else p for name, p in parts.items()}

        out = LoadedBatch(columns(context))
        if sequence:
            out["sequence"] = columns(sequence)
        out.ids, out.epoch, out.index = ids, epoch, index
        return out

    def _stages(self) -> List[Callable[[Any], Any]]:
        """What runs on each batch after it is made (on the transform
        threads when there is any)."""
        return [self.transform] if self.transform is not None else []

    def __iter__(self) -> Iterator[Any]:
        stages = self._stages()
        native = self._native
        try:
            if not stages:
                while True:
                    try:
                        item = native.next_batch()
                    except BaseException:
                        # The native loader moved past the failed batch.
                        self._state = native.state()
                        raise
                    if item is None:
                        self._state = native.state()  # the next epoch's start
                        return
                    self._state = (int(item[0]), int(item[1]) + 1)
                    yield self._make(item)
            else:
                yield from self._iter_staged(stages)
        finally:
            # A `break` (or an error) leaves the native loader ahead of what
            # was handed over: put it back there, which stops its threads.
            native.resume(*self._state)

    def _iter_staged(self, stages: List[Callable[[Any], Any]]) -> Iterator[Any]:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=self.transform_threads, thread_name_prefix="recordwire-transform"
            )
        pool = self._pool

        def run(batch: Any) -> Any:
            for f in stages:
                batch = f(batch)
            return batch

        ahead: Deque[Tuple[int, int, concurrent.futures.Future[Any]]] = collections.deque()
        depth = self.transform_threads + 1
        native = self._native
        ended = False
        try:
            while True:
                while not ended and len(ahead) < depth:
                    try:
                        item = native.next_batch()
                    except Exception as e:
                        # Raised at its batch, after the ones before it.
                        failed: concurrent.futures.Future[Any] = concurrent.futures.Future()
                        failed.set_exception(e)
                        epoch, after = native.state()
                        ahead.append((epoch, after - 1, failed))
                        ended = True
                        break
                    if item is None:
                        ended = True
                        break
                    ahead.append((int(item[0]), int(item[1]), pool.submit(run, self._make(item))))
                if not ahead:
                    self._state = native.state()  # the next epoch's start
                    return
                epoch, index, future = ahead.popleft()
                self._state = (epoch, index + 1)
                yield future.result()
        finally:
            for _, _, f in ahead:
                f.cancel()

    def __repr__(self) -> str:
        o = self._order
        return (
            f"recordwire.Loader({len(self)} batches of {self.batch_size} per epoch, mode {o['mode']}, "
            f"seed {o['seed']}, rank {o['rank']}/{o['world']}, epoch {self._state[0]}, batch {self._state[1]})"
        )
