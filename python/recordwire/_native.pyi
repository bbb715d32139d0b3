"""Type stubs of the native module ``recordwire._native``."""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

_Path = Union[str, "os.PathLike[str]"]

# What ``Dataset.__getitem__`` gives for one feature: a numpy array (int64,
# float32; OFRecord's int32, float64) or the bytes values.
FeatureValue = Union[npt.NDArray[Any], List[bytes]]

# The values of one decoded column: a numpy array (dense columns shaped
# ``[rows, *shape]``), ``(data uint8, offsets int64)`` for bytes, or a list of
# bytes for a spec that borrows.
ColumnValues = Union[
    npt.NDArray[Any],
    Tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]],
    List[bytes],
]
# A column: its values, or ``(values, row_splits)`` when ragged (var_len), or
# ``(values, row_splits, frame_splits)`` for a sequence's var_len feature.
Column = Union[
    ColumnValues,
    Tuple[ColumnValues, npt.NDArray[np.int64]],
    Tuple[ColumnValues, npt.NDArray[np.int64], npt.NDArray[np.int64]],
]

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

class Dataset:
    """Records of one or more TFRecord/OFRecord files as one id space."""

    def __init__(
        self,
        paths: Union[_Path, Sequence[_Path]],
        index: Optional[_Path] = None,
        framing: str = "auto",
        payload: str = "auto",
        verify_crc: bool = True,
    ) -> None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Dict[str, FeatureValue]: ...
    @property
    def payload(self) -> str: ...
    @property
    def files(self) -> List[str]: ...
    def raw(self, i: int) -> bytes: ...
    def decode(
        self,
        ids: Sequence[int],
        spec: Union[Spec, str, Dict[str, Any]],
        threads: int = 1,
    ) -> Dict[str, Column]: ...
