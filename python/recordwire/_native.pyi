"""Type stubs of the native module ``recordwire._native``."""

import os
import pathlib
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

_Path = Union[str, "os.PathLike[str]"]

class Error(Exception):
    """An error of recordwire, and where it was met."""

    kind: str
    """The stable kind name: ``truncated_data``, ``data_crc_mismatch``, ``decode_error``, ..."""
    file: Optional[str]
    record: Optional[int]
    offset: Optional[int]

class PanicError(Error):
    """A Rust panic (a bug in recordwire), caught before it reached Python; ``kind`` is ``panic``."""

class Spec:
    """A feature spec: the JSON that ``recordwire inspect --spec`` prints."""

    def __init__(self, spec: Dict[str, Any]) -> None: ...
    @staticmethod
    def from_json(text: Union[str, bytes]) -> "Spec": ...
    def to_json(self) -> str: ...
    @property
    def payload(self) -> str: ...
    @property
    def features(self) -> List[str]: ...

class Order:
    """One worker's epoch orders over a dataset (built by ``Dataset._order``)."""

    def __len__(self) -> int: ...
    @property
    def count(self) -> int: ...
    def ids(self, epoch: int, start: int = 0, stop: Optional[int] = None) -> npt.NDArray[np.int64]: ...

class Writer:
    """Records written atomically: a temporary file renamed over ``path`` by ``close``."""

    def __init__(
        self,
        path: _Path,
        framing: str = "tfrecord",
        payload: str = "example",
        compression: Optional[str] = "none",
        gzip_blocks: Optional[int] = None,
    ) -> None: ...
    def write(self, record: Union[Dict[Union[str, bytes], Any], bytes, bytearray, memoryview]) -> None: ...
    @property
    def records(self) -> int: ...
    @property
    def path(self) -> pathlib.Path: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...
    def __enter__(self) -> "Writer": ...
    def __exit__(self, exc_type: Any = None, exc: Any = None, tb: Any = None) -> bool: ...

class FileBytes:
    """A data file's bytes, the base of the arrays that views of it slice."""

    @property
    def __array_interface__(self) -> Dict[str, Any]: ...
    def __len__(self) -> int: ...

# What a bytes value is: a read-only memoryview into the mapped file.
ColumnParts = Dict[str, Any]

class Dataset:
    """The native dataset; ``recordwire.Dataset`` subclasses it."""

    def __new__(
        cls,
        paths: Union[_Path, Sequence[_Path]],
        index: Optional[_Path] = None,
        framing: str = "auto",
        payload: str = "auto",
        verify_crc: bool = True,
    ) -> "Dataset": ...
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Dict[str, Union[npt.NDArray[Any], List[memoryview]]]: ...
    @property
    def payload(self) -> str: ...
    @property
    def payloads(self) -> List[str]: ...
    @property
    def files(self) -> List[str]: ...
    @property
    def compression(self) -> List[str]: ...
    @property
    def block_compressed(self) -> List[bool]: ...
    def raw(self, i: int) -> memoryview: ...
    def get_many(self, ids: Union[Sequence[int], npt.NDArray[np.int64]], raw: bool = False) -> List[Any]: ...
    def _decode(
        self,
        ids: Union[Sequence[int], npt.NDArray[np.int64]],
        spec: Union[Spec, str, Dict[str, Any]],
        threads: int = 1,
    ) -> Tuple[int, Dict[str, ColumnParts], Dict[str, ColumnParts]]: ...
    def _order(
        self,
        mode: str = "shuffle",
        seed: int = 0,
        rank: int = 0,
        world: int = 1,
        worker: int = 0,
        workers: int = 1,
        tail: str = "pad",
        page_size: int = 4096,
        window: int = 8,
    ) -> Order: ...
    def index(
        self, path: Optional[_Path] = None, format: str = "native", spacing: int = 1048576
    ) -> List[pathlib.Path]: ...
