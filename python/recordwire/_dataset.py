"""``recordwire.Dataset``: the native dataset plus pickling, column types,
orders with resumable cursors, and the Arrow form of ``decode``."""

from __future__ import annotations

import json
import os
import warnings
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    Iterator,
    List,
    Literal,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
    overload,
)

import numpy as np

from recordwire import _columns
from recordwire._native import Dataset as _NativeDataset
from recordwire._native import Order, Schema, Spec
from recordwire._spec import is_feature_dict, spec_json

if TYPE_CHECKING:
    import pathlib

    import pyarrow

PathLike = Union[str, "os.PathLike[str]"]
# The names the options take (``_`` may stand for ``-`` in modes and tails).
Framing = Literal["auto", "tfrecord", "ofrecord"]
Payload = Literal["auto", "example", "sequence_example", "ofrecord", "raw"]
Mode = Literal["sequential", "shuffle", "page-aware", "quasi-random", "page_aware", "quasi_random"]
Tail = Literal["pad", "drop-last", "keep", "drop_last"]
IndexFormat = Literal["native", "dali", "lirs"]
OnError = Literal["fail", "skip"]
Ids = Union[Sequence[int], np.ndarray]
#: A ``storage_options`` value: text, or a bool or number (written as text).
StorageValue = Union[str, bool, int, float]


class Skipped(NamedTuple):
    """A byte range that ``Dataset(..., on_error="skip")`` passed over.

    ``start``/``end`` are byte offsets in the file (in its decompressed
    stream for a compressed file); ``kind`` is the error's stable kind
    (``length_crc_mismatch``, ``data_crc_mismatch``, ``truncated_data``,
    ``compression_error``, ...); ``message`` is the whole error, with the
    record id it would have had and its offset."""

    file: str
    start: int
    end: int
    kind: str
    message: str


class SkippedWarning(RuntimeWarning):
    """Warned when ``Dataset(..., on_error="skip")`` passed over damaged
    bytes: one warning per dataset, naming file, byte range and kind of each
    damaged region (the first 10, then how many more)."""


#: How many damaged regions a ``SkippedWarning`` names one by one.
_SHOWN_SKIPS = 10


def _warn_skipped(skipped: Sequence[Skipped], stacklevel: int) -> None:
    if not skipped:
        return
    lines = [f"{s.file}: bytes {s.start}..{s.end} skipped [{s.kind}]: {s.message}" for s in skipped[:_SHOWN_SKIPS]]
    if len(skipped) > _SHOWN_SKIPS:
        lines.append(f"... and {len(skipped) - _SHOWN_SKIPS} more (see ds.skipped)")
    head = f"on_error='skip': {len(skipped)} damaged region{'s' if len(skipped) != 1 else ''} skipped"
    warnings.warn("\n".join([head, *lines]), SkippedWarning, stacklevel=stacklevel + 1)


class PayloadWarning(UserWarning):
    """Warned once per dataset when the first records of a file may not be
    the message they are read as (records with fields a tf.Example does not
    have, or that do not decode): the notes ``recordwire cat`` prints on
    stderr, with the ``payload="raw"`` hint and, when the bytes tell, the
    message they look like (a TensorBoard ``tensorflow.Event``, a TensorFlow
    Ranking ``ExampleListWithContext``). Such files otherwise read as empty
    records."""


def _warn_payload(notes: Sequence[str], stacklevel: int) -> None:
    for note in notes:
        warnings.warn(f"note: {note}", PayloadWarning, stacklevel=stacklevel + 1)


#: The sample a spec is inferred from where reading every record first
#: would cost too much (``Loader(spec="auto")``, ``recordwire.ray.
#: read_records(spec=None)``): at most this many records, and about this
#: many bytes, in runs spread over every file.
SAMPLE_RECORDS = 4096
SAMPLE_BYTES = 16 << 20


def sampled_spec(ds: Any, stacklevel: int) -> Spec:
    """The spec inferred from a sample of ``ds``'s records (``SAMPLE_RECORDS``,
    ``SAMPLE_BYTES``; runs of neighbours spread over every file), made
    permissive where the sample cannot be sure: a feature some sampled
    record lacks is ``var_len``, and a ``fixed_len`` feature gets a default
    (zeros, empty bytes) for the records the sample did not see. Warned as
    a ``UserWarning`` that names ``recordwire.infer_spec(paths)``, which
    reads every record; nothing is warned when the sample is every record
    (the spec is then ``infer_spec``'s)."""
    spec, notes, read, exact = ds._infer_sample(SAMPLE_RECORDS, SAMPLE_BYTES)
    for note in notes:
        warnings.warn(f"infer_spec: {note}", UserWarning, stacklevel=stacklevel + 1)
    if not exact:
        doc = json.loads(spec.to_json())
        defaulted = [
            name
            for part in ("features", "sequence")
            for name, f in doc.get(part, {}).items()
            if f.get("form") == "fixed_len" and "default" in f
        ]
        shown = ", ".join(defaulted[:8]) + (f" and {len(defaulted) - 8} more" if len(defaulted) > 8 else "")
        files = len(ds._lengths)
        warnings.warn(
            f"spec inferred from a sample of {read} of {len(ds)} records ({files} file{'s' if files != 1 else ''}): "
            + (f"fixed-length features get a default (0, or empty bytes) for records that lack them ({shown}); " if defaulted else "")
            + "features some sampled record lacks are var_len. recordwire.infer_spec(paths) reads every record "
            "for the exact spec (pass it as spec=)",
            UserWarning,
            stacklevel=stacklevel + 1,
        )
    return spec


def _infer(ds: Any, stacklevel: int) -> Spec:
    """The spec inferred from every record of ``ds`` (a native dataset),
    each note of the inference warned as a ``UserWarning``."""
    spec, notes = ds._infer_spec()
    for note in notes:
        warnings.warn(f"infer_spec: {note}", UserWarning, stacklevel=stacklevel + 1)
    return spec


def infer_spec(
    source: Any,
    *,
    framing: Framing = "auto",
    payload: Payload = "auto",
    verify_crc: bool = True,
) -> Spec:
    """The decode spec inferred from the records, as ``recordwire inspect
    --spec FILES`` prints it (the same JSON: ``infer_spec(...).to_json()``).

    ``source``: a ``Dataset``, or what ``Dataset`` opens (a path, a glob
    pattern or a list of paths; ``framing``/``payload``/``verify_crc`` then
    open it). Every record of every file is read, in id order, as the CLI
    does; a record that is not a valid message of its payload raises
    ``recordwire.Error`` (kind ``decode_error``, with file, record and
    offset). Files read as different payloads, or as ``raw``, raise
    ``ValueError``.

    The inference's notes (features left out: never set, or with lists too
    irregular to infer) are warned, one ``UserWarning`` each, beginning
    ``infer_spec:`` — what the CLI prints on stderr as ``note: ...``.
    """
    if isinstance(source, _NativeDataset):
        ds: Any = source
    else:
        ds = Dataset(source, framing=framing, payload=payload, verify_crc=verify_crc)
    return _infer(ds, stacklevel=2)


def as_spec(spec: Any) -> Any:
    """What the native decoder takes: a ``Spec``, JSON text, or the JSON as a
    dict; a TensorFlow-style dict (name -> ``FixedLen``/``VarLen``/... or
    ``tf.io.*Feature``) is converted to the JSON spec first."""
    if isinstance(spec, Mapping) and is_feature_dict(spec):
        return Spec.from_json(spec_json(spec))
    return spec


class _Methods:
    """What ``Dataset`` adds to its native class:
    pickling as their arguments, iteration, ``decode`` with column types and
    Arrow, and orders."""

    _paths: Any
    _options: Dict[str, Any]

    if TYPE_CHECKING:

        def __len__(self) -> int: ...
        @overload
        def __getitem__(self, i: int) -> Dict[str, Any]: ...
        @overload
        def __getitem__(self, i: slice) -> List[Dict[str, Any]]: ...
        def __getitem__(self, i: Union[int, slice]) -> Any: ...
        def _decode(self, ids: Any, spec: Any, *, threads: int = 1, arrow: bool = False) -> Any: ...
        def _decode_paths(self, ids: Any, paths: Any, *, enum_names: bool = False) -> Any: ...
        @property
        def message(self) -> Optional[Schema]: ...
        def _infer_spec(self, ids: Optional[Sequence[int]] = None) -> Tuple[Spec, List[str]]: ...
        def _infer_sample(self, max_records: int, max_bytes: int) -> Tuple[Spec, List[str], int, bool]: ...
        @property
        def _payload_notes(self) -> List[str]: ...
        @property
        def _lengths(self) -> List[Tuple[int, int]]: ...
        @property
        def _skipped(self) -> List[Tuple[str, int, int, str, str]]: ...
        def _order(self, mode: str = "shuffle", **kwargs: Any) -> Order: ...

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        for i in range(len(self)):
            yield self[i]

    def _sampled(self, stacklevel: int) -> Spec:
        """The spec of ``sampled_spec``, inferred on first use and kept (or
        the full inference's, when ``decode(..., "auto")`` made it)."""
        kept: Optional[Spec] = self.__dict__.get("_auto_spec")
        if kept is None:
            kept = self.__dict__.get("_sampled_spec")
        if kept is None:
            kept = sampled_spec(self, stacklevel=stacklevel + 1)
            self.__dict__["_sampled_spec"] = kept
        return kept

    def _auto(self, stacklevel: int) -> Spec:
        kept: Optional[Spec] = self.__dict__.get("_auto_spec")
        if kept is None:
            kept = _infer(self, stacklevel=stacklevel + 1)
            self.__dict__["_auto_spec"] = kept
        return kept

    @property
    def auto_spec(self) -> Spec:
        """The spec ``decode(ids, "auto")`` uses: inferred from every
        record (``recordwire.infer_spec(self)``) on first use, then kept."""
        return self._auto(stacklevel=2)

    @property
    def skipped(self) -> List[Skipped]:
        """The byte ranges that ``on_error="skip"`` passed over while
        opening (empty for clean files, and with ``on_error="fail"``)."""
        return [Skipped(*s) for s in self._skipped]

    @overload
    def decode(
        self, ids: Ids, spec: Any, *, threads: int = ..., to: Literal["numpy"] = ..., enum_names: bool = ...
    ) -> Dict[str, Any]: ...
    @overload
    def decode(
        self, ids: Ids, spec: Any, *, threads: int = ..., to: Literal["arrow"], enum_names: bool = ...
    ) -> "pyarrow.RecordBatch": ...
    def decode(
        self,
        ids: Ids,
        spec: Any,
        *,
        threads: int = 1,
        to: Literal["numpy", "arrow"] = "numpy",
        enum_names: bool = False,
    ) -> Any:
        """Decodes records ``ids`` (in that order) by ``spec`` on ``threads``
        threads with the GIL released.

        ``spec``: a ``Spec``, the JSON text ``recordwire inspect --spec``
        prints, that JSON as a dict, or a TensorFlow-style dict (name ->
        ``FixedLen``/``VarLen``/``FixedLenSequence``, or ``tf.io`` features);
        or ``"auto"``: the spec ``recordwire.infer_spec(ds)`` gives, inferred
        from every record on the first ``decode(..., "auto")`` (its notes
        warned then) and kept on the dataset (``ds.auto_spec``) for the next
        ones; a reopened (unpickled) dataset infers it again.

        ``to="numpy"`` gives a dict name -> column: a numpy array
        ``[rows, *shape]`` (fixed_len), ``Ragged(values, row_splits)``
        (var_len), ``Padded(values, lengths)`` (fixed_len_sequence, frames,
        OFRecord raw), ``Sparse(indices, values, dense_shape)`` when the spec
        asks, with bytes values as ``Bytes(data, offsets)`` or, when the spec
        borrows, a list of ``memoryview``s into the file. A SequenceExample
        spec's sequence columns are under the key ``"sequence"`` (a dict).
        ``to="arrow"`` gives a ``pyarrow.RecordBatch`` (the decoder's
        buffers, handed over through the Arrow C data interface without a
        copy), one column per feature, sequence features after the context
        ones (``sequence.NAME`` where a context feature has the name too),
        typed as ``recordwire export`` types its Parquet columns:
        fixed_len as the value or nested ``fixed_size_list``s,
        var_len as ``large_list``, fixed_len_sequence as a ``large_list`` of
        each record's elements (unpadded: the list lengths are the numpy
        form's lengths), a sequence's var_len as ``large_list`` of
        ``large_list``, bytes as ``large_binary``, OFRecord raw features that
        may hold fewer values as a ``large_list`` of the values held; never
        null.

        A dataset of any message (``Dataset(paths, message=...)``) decodes
        by field paths instead: ``spec`` is a list of paths
        (``["tracks.states.center_x", "scenario_id"]``, ``""`` for the whole
        message; a single path as a str), one column each, one row per
        record, and only the fields on the paths are read. ``to="arrow"``
        types them as ``recordwire export --message`` does (docs/FORMAT.md
        §14.1): repeated fields as ``large_list``, messages as structs, maps
        as Arrow maps, enums as int32 (their names with ``enum_names=True``),
        bytes and strings as ``large_binary``/``large_string``, a field with
        presence that is absent as null. ``to="numpy"`` (which needs pyarrow
        too) gives numbers as numpy arrays, lists of numbers as ``[rows, n]``
        arrays where every row has ``n`` and as ``Ragged`` otherwise, and
        other columns as their pyarrow arrays. ``threads`` is not used: the
        records are decoded on one thread, with the GIL released.
        """
        if to not in ("numpy", "arrow"):
            raise ValueError(f"to: 'numpy' or 'arrow', not {to!r}")
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        if self.message is not None or _is_paths(spec):
            # A dataset of any message: columns by field path.
            paths = _paths_of(spec)
            pa = _columns.pyarrow_module()
            batch = pa.record_batch(self._decode_paths(ids, paths, enum_names=enum_names))
            return batch if to == "arrow" else _columns.path_columns(batch)
        if isinstance(spec, str) and spec == "auto":
            spec = self._auto(stacklevel=2)
        if to == "arrow":
            pa = _columns.pyarrow_module()
            return pa.record_batch(self._decode(ids, as_spec(spec), threads=threads, arrow=True))
        rows, context, sequence = self._decode(ids, as_spec(spec), threads=threads)
        out: Dict[str, Any] = {name: _columns.column(p) for name, p in context.items()}
        if sequence:
            out["sequence"] = {name: _columns.column(p) for name, p in sequence.items()}
        return out

    @overload
    def order(
        self,
        mode: Mode = ...,
        *,
        seed: int = ...,
        epoch: int = ...,
        rank: int = ...,
        world: int = ...,
        worker: int = ...,
        workers: int = ...,
        tail: Tail = ...,
        page_size: int = ...,
        window: int = ...,
        lazy: Literal[False] = ...,
    ) -> np.ndarray: ...
    @overload
    def order(
        self,
        mode: Mode = ...,
        *,
        seed: int = ...,
        epoch: int = ...,
        rank: int = ...,
        world: int = ...,
        worker: int = ...,
        workers: int = ...,
        tail: Tail = ...,
        page_size: int = ...,
        window: int = ...,
        lazy: Literal[True],
    ) -> Iterator[np.ndarray]: ...
    def order(
        self,
        mode: Mode = "shuffle",
        *,
        seed: int = 0,
        epoch: int = 0,
        rank: int = 0,
        world: int = 1,
        worker: int = 0,
        workers: int = 1,
        tail: Tail = "pad",
        page_size: int = 4096,
        window: int = 8,
        lazy: bool = False,
    ) -> Union[np.ndarray, Iterator[np.ndarray]]:
        """One epoch's ids for this rank and worker, as the CLI's ``order``
        gives them: an int64 array, or with ``lazy=True`` an iterator over
        chunks of it (for datasets too large to hold an epoch's ids).

        ``mode``: ``sequential``, ``shuffle``, ``page-aware`` or
        ``quasi-random``; ``tail``: ``pad`` (as PyTorch's
        ``DistributedSampler``), ``drop-last`` or ``keep``.
        """
        o = self._order(
            mode,
            seed=seed,
            rank=rank,
            world=world,
            worker=worker,
            workers=workers,
            tail=tail,
            page_size=page_size,
            window=window,
        )
        if lazy:
            return _chunks(o, epoch, 0)
        return o.ids(epoch)

    def _deprecated_index(self) -> None:
        warnings.warn(
            f"{type(self).__name__}.index() is deprecated: it writes files, call write_index() instead",
            DeprecationWarning,
            stacklevel=3,
        )

    def orders(self, **kwargs: Any) -> "Cursor":
        """A resumable walk over epochs (see ``Cursor``)."""
        return Cursor(self, **kwargs)


class Dataset(_Methods, _NativeDataset):
    """Records of one or more TFRecord/OFRecord files as one id space.

    ``Dataset(paths, *, index=None, framing="auto", payload="auto", verify_crc=True, on_error="fail", storage_options=None)``:
    ``paths`` is a path, a glob pattern (``*``/``?`` in the file name) or a
    list of paths; each file's sidecar index ``<file>.rwindex`` is used when
    current, else the index is built while opening.

    Remote objects: a path may be a URL, ``s3://bucket/key``, ``gs://...``,
    ``az://...``/``abfs://...``, or ``http(s)://...`` (a server that honours
    ``Range``), and a glob may be one (``s3://bucket/train-*.tfrecord``: one
    listing). Credentials and endpoints come from the environment
    (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ...), overridden by
    ``storage_options`` (object_store's keys such as ``aws_endpoint``,
    ``allow_http``, ``aws_region``, and recordwire's ``max_retries``,
    ``retry_timeout``, ``coalesce_gap``, ``concurrency``, ``cache_dir``). A
    record is one ranged GET once the index is loaded; ``get_many`` and
    ``decode`` coalesce neighbouring records into fewer requests, fetched
    concurrently. The index comes from the local index cache
    (``RECORDWIRE_CACHE_DIR``), else the sidecar ``KEY.rwindex`` beside the
    object, else one streaming pass (then kept in the cache, which a
    DataLoader worker reopening the dataset finds). ``len(ds)``, ``ds[i]``
    (a dict name -> numpy array, or a list of ``memoryview``s for bytes
    values; a SequenceExample's feature lists under ``"sequence"``: name ->
    one such value per frame), ``ds.raw(i)`` (the payload as a
    ``memoryview``), ``ds.get_many``, iteration, ``ds.decode``,
    ``ds.order``, ``ds.write_index``.

    Damaged files: with ``on_error="fail"`` (the default) opening a file
    that is damaged anywhere raises ``recordwire.Error`` (kind, file, record,
    offset). With ``on_error="skip"`` (``recordwire cat --on-error skip``'s
    policy) the valid records get the ids and the damage is passed over:
    after a bad data CRC the damaged frame, after a bad length CRC the bytes
    up to the next valid frame header; a truncation, an OFRecord error or a
    decompression error ends the file there (the records before it are
    kept). Data CRCs are then verified while opening (unless
    ``verify_crc=False``), so that every id reads. What was skipped is in
    ``ds.skipped`` (``Skipped(file, start, end, kind, message)``) and warned
    once as a ``recordwire.SkippedWarning`` (a ``RuntimeWarning``). The
    sidecar is not used then (each file is indexed afresh; ``index=`` is
    refused), and an index built over damage is never written:
    ``write_index`` raises for such a file rather than leave a sidecar
    that would later pass for a clean file's. A damaged compressed file is
    decompressed into memory up to the damage.

    A missing file raises ``recordwire.NotFoundError``, which is also a
    ``FileNotFoundError`` (any I/O error is a ``recordwire.IoError``, also
    an ``OSError``).

    Any mix of files: plain, GZIP or ZLIB compressed (``.gz``/``.zz`` or
    detected), TFRecord or OFRecord, each with its own payload
    (``ds.payloads``; ``ds[i]`` reads record ``i`` as its file's). A
    compressed file is read through its checkpoint index (``recordwire index``
    or ``ds.write_index(spacing=...)`` writes it as its sidecar, else one is
    built while opening, in one streaming pass): a record is inflated from
    the nearest checkpoint, never the whole file; ``get_many`` and ``decode``
    read in file order, so that each span is inflated once, and
    ``order(mode="page-aware", page_size=0)`` makes each checkpoint span a
    page. ``decode`` needs one payload over all files.

    Zero copy and lifetime: every ``memoryview`` (and every bytes column of
    ``decode`` with ``borrow``) points into the file's memory map (or, for a
    compressed file, into the inflated span the record came from); it stays
    alive while any such view does, even after the dataset is gone
    (``del ds`` cannot invalidate a view). Bytes values of a compressed
    file's records in ``ds[i]`` and ``decode`` are copies. Truncating the
    file on disk while it is mapped is not supported (the OS may then fault
    on access).

    A dataset pickles as its arguments: unpickling (a ``spawn`` worker, a Ray
    task) reopens the files in that process; nothing is shared by accident.

    Any protobuf message: with ``message=recordwire.Schema.from_proto(...)``
    (or ``from_descriptor_set``, ``from_class``) every record is read as that
    message. ``ds[i]`` is then a dict of the fields that are set (as
    ``MessageToDict`` picks them), by name, in Python values: ``int`` (64-bit
    ones too), ``float``, ``bool``, ``str``, bytes as ``memoryview``s of the
    file, enums by name (the number when unknown), repeated numbers (and
    bools) as numpy arrays, other repeated fields as lists, messages and maps
    as dicts, a Timestamp as an aware UTC ``datetime`` and a Duration as a
    ``timedelta`` (both to the microsecond). ``ds.json(i)`` is the record as
    protobuf's JSON text (``MessageToJson``'s values, compact), ``ds.raw(i)``
    its bytes.
    """

    def __init__(
        self,
        paths: Union[PathLike, Sequence[PathLike]],
        *,
        index: Optional[PathLike] = None,
        framing: Framing = "auto",
        payload: Payload = "auto",
        verify_crc: bool = True,
        on_error: OnError = "fail",
        storage_options: Optional[Mapping[str, StorageValue]] = None,
        message: Optional[Schema] = None,
    ) -> None:
        # The native __new__ opened everything; keep the arguments to pickle.
        self._paths = paths if isinstance(paths, (str, os.PathLike)) else list(paths)
        if isinstance(paths, str) and "://" in paths and any(c in paths for c in "*?"):
            # A remote glob pickles as the objects it listed: a worker that
            # reopens the dataset does not list the store again.
            self._paths = self.files
        self._options = dict(index=index, framing=framing, payload=payload, verify_crc=verify_crc)
        if on_error != "fail":
            self._options["on_error"] = on_error
        if storage_options:
            self._options["storage_options"] = dict(storage_options)
        if message is not None:
            self._options["message"] = message
        _warn_skipped(self.skipped, stacklevel=2)
        _warn_payload(self._payload_notes, stacklevel=2)

    def __reduce__(self):
        return (_reopen, (type(self), self._paths, self._options))

    def index(
        self, path: Optional[PathLike] = None, format: IndexFormat = "native", spacing: int = 1 << 20
    ) -> List[Union["pathlib.Path", str]]:
        """Deprecated: ``write_index`` (this name hid that it writes files)."""
        self._deprecated_index()
        return self.write_index(path, format=format, spacing=spacing)


class GzDataset(Dataset):
    """Deprecated: ``Dataset`` reads GZIP/ZLIB files by id itself (through
    their checkpoint indexes), in any mix with plain files.
    ``GzDataset(paths, *, framing="auto", payload="auto", verify_crc=True)``
    is ``Dataset(paths, framing=..., payload=..., verify_crc=...)`` with a
    ``DeprecationWarning``; it unpickles as a ``Dataset``."""

    def __new__(
        cls,
        paths: Union[PathLike, Sequence[PathLike]],
        *,
        framing: Framing = "auto",
        payload: Payload = "auto",
        verify_crc: bool = True,
    ) -> "GzDataset":
        warnings.warn(
            "recordwire.GzDataset is deprecated: recordwire.Dataset reads compressed files itself",
            DeprecationWarning,
            stacklevel=2,
        )
        ds = super().__new__(cls, paths, framing=framing, payload=payload, verify_crc=verify_crc)
        assert isinstance(ds, GzDataset)
        return ds

    def __init__(
        self,
        paths: Union[PathLike, Sequence[PathLike]],
        *,
        framing: Framing = "auto",
        payload: Payload = "auto",
        verify_crc: bool = True,
    ) -> None:
        super().__init__(paths, framing=framing, payload=payload, verify_crc=verify_crc)

    def __reduce__(self):
        return (_reopen, (Dataset, self._paths, self._options))

    def index(self, spacing: int = 1 << 20) -> List[Union["pathlib.Path", str]]:  # type: ignore[override]
        """Deprecated: ``write_index(spacing=...)``."""
        self._deprecated_index()
        return self.write_index(spacing=spacing)


class Lazy:
    """A dataset opened in the process that reads it: the adapters keep one
    (it pickles as the arguments), so that a forked or spawned worker opens
    its own map instead of using one opened in another process."""

    def __init__(self, paths: Any, **open_args: Any) -> None:
        noted = isinstance(paths, Dataset)
        if isinstance(paths, Dataset):
            open_args = {**paths._options, **open_args}
            paths = paths._paths
        self._paths = paths
        self._open_args = open_args
        self._ds: Optional[Dataset] = None
        self._pid = -1
        # The payload notes are warned by the first open only (not again
        # in each worker that reopens the dataset).
        self._noted = noted

    @property
    def dataset(self) -> Dataset:
        if self._ds is None or self._pid != os.getpid():
            with warnings.catch_warnings():
                if self._noted:
                    warnings.simplefilter("ignore", PayloadWarning)
                self._ds = Dataset(self._paths, **self._open_args)
            self._noted = True
            self._pid = os.getpid()
        return self._ds

    def __getstate__(self) -> Dict[str, Any]:
        return {"_paths": self._paths, "_open_args": self._open_args, "_ds": None, "_pid": -1, "_noted": True}

    def __repr__(self) -> str:
        return f"{self._paths!r}"


def portable(value: Any) -> Any:
    """``value`` (a record of ``ds[i]``) with its memoryviews copied to
    ``bytes``, at any depth (a SequenceExample's feature lists hold a list of
    values per feature): what the adapters hand to another process, where a
    view would drag its file along."""
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, list):
        return [portable(v) for v in value]
    if isinstance(value, dict):
        return {k: portable(v) for k, v in value.items()}
    return value


def _is_paths(spec: Any) -> bool:
    """Whether ``spec`` is a list of field paths (not a feature spec)."""
    return isinstance(spec, (list, tuple)) and all(isinstance(p, str) for p in spec)


def _paths_of(spec: Any) -> List[str]:
    if isinstance(spec, str) and not spec.lstrip().startswith("{") and spec != "auto":
        return [spec]
    if _is_paths(spec):
        return list(spec)
    raise TypeError(
        "a dataset of a message decodes by field paths: a list of str (['a.b', 'c'], '' for the whole "
        f"message), not {type(spec).__name__}"
    )


def _reopen(cls: Any, paths: Any, options: Dict[str, Any]) -> Any:
    """Unpickles a dataset: opens its files again (options are keyword-only).
    The payload notes were warned where it was first opened."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PayloadWarning)
        return cls(paths, **options)


def _chunks(order: Order, epoch: int, start: int, chunk: int = 1 << 16) -> Iterator[np.ndarray]:
    n = len(order)
    while start < n:
        yield order.ids(epoch, start, min(start + chunk, n))
        start += chunk


class Cursor:
    """One worker's ids across epochs, resumable: ``state_dict()`` says
    where it is, ``load_state_dict()`` goes back there.

    ``Cursor(ds, *, mode="shuffle", seed=0, rank=0, world=1, worker=0,
    workers=1, tail="pad", epoch=0)``; ``next_ids(n)`` gives the next ``n``
    ids (fewer at the end of an epoch), ``set_epoch(e)`` starts epoch ``e``.
    """

    def __init__(self, dataset: "_Methods", *, epoch: int = 0, **order: Any) -> None:
        self._spec = dict(order)
        self._order = dataset._order(**order)
        self.epoch = epoch
        self.position = 0

    def __len__(self) -> int:
        return len(self._order)

    def set_epoch(self, epoch: int) -> None:
        self.epoch, self.position = epoch, 0

    def next_ids(self, n: int) -> np.ndarray:
        """The next ``n`` ids of the current epoch (empty at its end)."""
        stop = min(self.position + n, len(self._order))
        ids = self._order.ids(self.epoch, self.position, stop)
        self.position = stop
        return ids

    def __iter__(self) -> Iterator[int]:
        # Ids are fetched 4096 at a time, but the position counts the ids
        # handed out, so ``state_dict()`` taken between two ``next()`` calls
        # resumes at the next id. A ``next_ids``, ``set_epoch`` or
        # ``load_state_dict`` between two ``next()`` calls moves the cursor:
        # iteration goes on from where it then stands.
        n = len(self._order)
        while self.position < n:
            epoch, start = self.epoch, self.position
            chunk = self._order.ids(epoch, start, min(start + 4096, n)).tolist()
            for k, i in enumerate(chunk):
                self.position = start + k + 1
                yield i
                if (self.epoch, self.position) != (epoch, start + k + 1):
                    break

    def state_dict(self) -> Dict[str, Any]:
        return {"epoch": self.epoch, "position": self.position, "order": dict(self._spec), "len": len(self._order)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if dict(state.get("order", self._spec)) != self._spec:
            raise ValueError(f"the state is of another order: {state.get('order')} (this one: {self._spec})")
        if state.get("len", len(self._order)) != len(self._order):
            raise ValueError("the state is of a dataset of another size")
        self.epoch, self.position = int(state["epoch"]), int(state["position"])


__all__ = ["Dataset", "Cursor", "Lazy", "PayloadWarning", "as_spec", "sampled_spec"]
