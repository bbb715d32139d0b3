"""Type stubs of the native module ``recordwire._native``."""

import os
import pathlib
from types import TracebackType
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Type, Union, overload

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base, final

__all__ = [
    "Error",
    "PanicError",
    "IoError",
    "NotFoundError",
    "PermissionDeniedError",
    "Dataset",
    "Spec",
    "Order",
    "Writer",
    "FileBytes",
    "ArrowBatch",
    "ArrowWriter",
    "Loader",
    "PooledBuffer",
    "Schema",
    "schema_columns",
    "_panic_for_test",
    "_io_error_for_test",
    "__version__",
]

__version__: str

_Path = Union[str, "os.PathLike[str]"]
_Framing = Literal["auto", "tfrecord", "ofrecord"]
_Payload = Literal["auto", "example", "sequence_example", "ofrecord", "raw"]
# `_` may stand for `-` in modes and tails.
_Mode = Literal["sequential", "shuffle", "page-aware", "quasi-random", "page_aware", "quasi_random"]
_Tail = Literal["pad", "drop-last", "keep", "drop_last"]
_Ids = Union[Sequence[int], npt.NDArray[np.int64]]
# A feature's value in `ds[i]`: a numpy array, or a list of memoryviews
# (bytes values) into the file.
_Value = Union[npt.NDArray[Any], List[memoryview]]
# `ds[i]`: name -> value; a SequenceExample's feature lists under
# "sequence": name -> one value per frame.
_Record = Dict[str, Union[_Value, Dict[str, List[_Value]]]]

class Error(Exception):
    """An error of recordwire, and where it was met."""

    kind: str
    """The stable kind name: ``truncated_data``, ``data_crc_mismatch``, ``decode_error``, ..."""
    file: Optional[str]
    record: Optional[int]
    offset: Optional[int]

class PanicError(Error):
    """A Rust panic (a bug in recordwire), caught before it reached Python; ``kind`` is ``panic``."""

class IoError(Error, OSError):
    """An I/O error (kind ``io_error``): also an ``OSError``, with ``errno``, ``strerror`` and ``filename``."""

class NotFoundError(IoError, FileNotFoundError):
    """A file that does not exist: also a ``FileNotFoundError``."""

class PermissionDeniedError(IoError, PermissionError):
    """A file that may not be read or written: also a ``PermissionError``."""

@final
class Spec:
    """A feature spec: the JSON that ``recordwire inspect --spec`` prints."""

    def __new__(cls, spec: Dict[str, Any]) -> "Spec": ...
    @staticmethod
    def from_json(text: Union[str, bytes]) -> "Spec": ...
    def to_json(self) -> str: ...
    @property
    def payload(self) -> str: ...
    @property
    def features(self) -> List[str]: ...
    def __reduce__(self) -> Tuple[Any, Tuple[str]]: ...

@final
class Order:
    """One worker's epoch orders over a dataset (built by ``Dataset._order``)."""

    def __len__(self) -> int: ...
    @property
    def count(self) -> int: ...
    def ids(self, epoch: int, start: int = 0, stop: Optional[int] = None) -> npt.NDArray[np.int64]: ...

@final
class Writer:
    """Records written atomically: a temporary file renamed over ``path`` by ``close``.

    Framing, payload and compression come from the file name as the CLI's
    ``pack`` takes them, unless named: ``.gz``/``.zlib`` compress,
    ``x.ofrecord`` and OneFlow's ``part-N`` are OFRecord, anything else
    TFRecord of tf.Example; a payload that contradicts the name's framing
    raises ``ValueError``. A writer dropped without ``close()`` (or a
    ``with`` block) writes nothing and emits a ``ResourceWarning`` naming
    the path and the records lost.
    """

    def __new__(
        cls,
        path: _Path,
        *,
        framing: Optional[Literal["tfrecord", "ofrecord"]] = None,
        payload: Optional[Literal["example", "sequence_example", "ofrecord", "raw"]] = None,
        compression: Optional[Literal["none", "gzip", "zlib"]] = None,
        gzip_blocks: Optional[int] = None,
    ) -> "Writer": ...
    @property
    def framing(self) -> Literal["tfrecord", "ofrecord"]: ...
    @property
    def payload(self) -> Literal["example", "sequence_example", "ofrecord", "raw"]: ...
    @property
    def compression(self) -> Literal["none", "gzip", "zlib"]: ...
    def write(self, record: Union[Dict[Union[str, bytes], Any], bytes, bytearray, memoryview]) -> None: ...
    @property
    def records(self) -> int: ...
    @property
    def path(self) -> pathlib.Path: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...
    def __enter__(self) -> "Writer": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]] = None,
        exc: Optional[BaseException] = None,
        tb: Optional[TracebackType] = None,
    ) -> bool: ...

@final
class FileBytes:
    """A data file's bytes, the base of the arrays that views of it slice."""

    @property
    def __array_interface__(self) -> Dict[str, Any]: ...
    def __len__(self) -> int: ...

@final
class ArrowBatch:
    """A decoded batch in Arrow form (``Dataset._decode(..., arrow=True)``):
    ``pyarrow.record_batch(obj)`` takes it through the Arrow PyCapsule
    interface, without copying the buffers."""

    @property
    def num_rows(self) -> int: ...
    def __arrow_c_schema__(self) -> Any: ...
    def __arrow_c_array__(self, requested_schema: Optional[Any] = None) -> Tuple[Any, Any]: ...

@final
class ArrowWriter:
    """A record file written from Arrow record batches, each given as an
    Arrow IPC stream (``write_ipc``); ``close`` writes it whole (a temporary
    renamed, or one ``PUT``) and its sidecar index. ``recordwire.write_arrow``
    and the Ray Data datasink use it."""

    def __new__(
        cls,
        path: _Path,
        *,
        payload: Literal["example", "ofrecord"] = "example",
        compression: Optional[Literal["none", "gzip", "zlib"]] = None,
        gzip_blocks: Optional[int] = None,
        index: bool = True,
        storage_options: Optional[Mapping[str, Union[str, bool, int, float]]] = None,
    ) -> "ArrowWriter": ...
    def write_ipc(self, stream: bytes) -> int: ...
    @property
    def records(self) -> int: ...
    @property
    def path(self) -> str: ...
    def close(self) -> int: ...
    def abort(self) -> None: ...

@final
class PooledBuffer:
    """One buffer of a batch of a ``Loader``'s pool, the base of the numpy
    arrays over it: the batch goes back to the pool when the last dies."""

    @property
    def __array_interface__(self) -> Dict[str, Any]: ...

@final
class Loader:
    """The native loader under ``recordwire.Loader``: batches of a
    dataset's epochs read and decoded ahead on Rust threads."""

    def __new__(
        cls,
        dataset: "Dataset",
        spec: Any,
        batch_size: int,
        *,
        mode: str = "shuffle",
        seed: int = 0,
        rank: int = 0,
        world: int = 1,
        worker: int = 0,
        workers: int = 1,
        tail: str = "pad",
        page_size: int = 4096,
        window: int = 8,
        drop_last: bool = False,
        prefetch: int = 4,
        threads: int = 0,
        readers: int = 0,
        arrow: bool = False,
    ) -> "Loader": ...
    def __len__(self) -> int: ...
    def state(self) -> Tuple[int, int]: ...
    def resume(self, epoch: int, batch: int) -> None: ...
    def set_epoch(self, epoch: int) -> None: ...
    def close(self) -> None: ...
    def running_threads(self) -> int: ...
    def waited(self) -> float: ...
    def thread_counts(self) -> Tuple[int, int]: ...
    def pool_stats(self) -> Dict[str, int]: ...
    def next_batch(self) -> Optional[Tuple[Any, ...]]: ...

# What a bytes value is: a read-only memoryview into the mapped file.
_ColumnParts = Dict[str, Any]

@final
class Schema:
    """A root message type of a schema given at run time."""

    @staticmethod
    def from_proto(
        files: Union[_Path, Sequence[_Path]], message: str, *, include: Optional[Sequence[_Path]] = None
    ) -> "Schema": ...
    @staticmethod
    def from_descriptor_set(data: Union[bytes, _Path], message: str) -> "Schema": ...
    @staticmethod
    def from_class(cls: Any, message: Optional[str] = None) -> "Schema": ...
    @staticmethod
    def builtin(message: str) -> "Schema": ...
    @property
    def message_name(self) -> str: ...
    @property
    def field_names(self) -> List[str]: ...
    def descriptor_set(self) -> bytes: ...
    def json(self, data: bytes, *, json_names: bool = False, print_defaults: bool = False) -> str: ...
    def to_dict(self, data: bytes) -> Dict[str, Any]: ...
    def __reduce__(self) -> Tuple[Any, Tuple[bytes, str]]: ...

@disjoint_base
class Dataset:
    """The native dataset; ``recordwire.Dataset`` subclasses it."""

    def __new__(
        cls,
        paths: Union[_Path, Sequence[_Path]],
        *,
        index: Optional[_Path] = None,
        framing: _Framing = "auto",
        payload: _Payload = "auto",
        verify_crc: bool = True,
        on_error: Literal["fail", "skip"] = "fail",
        storage_options: Optional[Mapping[str, Union[str, bool, int, float]]] = None,
        message: Optional[Schema] = None,
    ) -> "Dataset": ...
    def __len__(self) -> int: ...
    def json(self, i: int, *, json_names: bool = False, print_defaults: bool = False) -> str: ...
    @property
    def message(self) -> Optional[Schema]: ...
    def _decode_paths(self, ids: _Ids, paths: Sequence[str], *, enum_names: bool = False) -> ArrowBatch: ...
    @overload
    def __getitem__(self, i: int) -> _Record: ...
    @overload
    def __getitem__(self, i: slice) -> List[_Record]: ...
    @property
    def payload(self) -> str: ...
    @property
    def payloads(self) -> List[str]: ...
    @property
    def files(self) -> List[str]: ...
    @property
    def span_size(self) -> Optional[int]: ...
    @property
    def compression(self) -> List[str]: ...
    @property
    def block_compressed(self) -> List[bool]: ...
    @property
    def _skipped(self) -> List[Tuple[str, int, int, str, str]]: ...
    @property
    def _lengths(self) -> List[Tuple[int, int]]: ...
    def _infer_spec(self, ids: Optional[Sequence[int]] = None) -> Tuple[Spec, List[str]]: ...
    def _infer_sample(self, max_records: int, max_bytes: int) -> Tuple[Spec, List[str], int, bool]: ...
    @property
    def _payload_notes(self) -> List[str]: ...
    def raw(self, i: int) -> memoryview: ...
    def prefetch(self, ids: _Ids) -> None: ...
    def get_many(self, ids: _Ids, *, raw: bool = False) -> List[Any]: ...
    @overload
    def _decode(
        self,
        ids: _Ids,
        spec: Union[Spec, str, Dict[str, Any]],
        *,
        threads: int = 1,
        arrow: Literal[False] = False,
    ) -> Tuple[int, Dict[str, _ColumnParts], Dict[str, _ColumnParts]]: ...
    @overload
    def _decode(
        self,
        ids: _Ids,
        spec: Union[Spec, str, Dict[str, Any]],
        *,
        threads: int = 1,
        arrow: Literal[True],
    ) -> ArrowBatch: ...
    def _order(
        self,
        mode: _Mode = "shuffle",
        *,
        seed: int = 0,
        rank: int = 0,
        world: int = 1,
        worker: int = 0,
        workers: int = 1,
        tail: _Tail = "pad",
        page_size: int = 4096,
        window: int = 8,
    ) -> Order: ...
    def write_index(
        self,
        path: Optional[_Path] = None,
        *,
        format: Literal["native", "dali", "lirs"] = "native",
        spacing: int = 1048576,
    ) -> List[Union[pathlib.Path, str]]: ...

# Test hooks (not API): raise as any method would.
def schema_columns(
    descriptor_set: bytes,
    message: str,
    path: _Path,
    ids: Sequence[int],
    paths: Sequence[str],
    *,
    enum_names: bool = False,
) -> ArrowBatch:
    """Records ``ids`` of the record file ``path``, each read as the message
    ``message`` of the binary ``FileDescriptorSet`` ``descriptor_set``, as one
    Arrow column per field path of ``paths`` (``"a.b.c"``; ``""`` is the
    whole message) and one row per record: ``pyarrow.record_batch(result)``.
    The mapping is the crate's (``recordwire::schema::Columns``), the same as
    ``recordwire export --message --columns``."""

def _panic_for_test(message: str) -> None: ...
def _io_error_for_test(errno: int, file: str) -> None: ...
