"""The column types ``Dataset.decode`` returns.

Every buffer is the decoder's own memory handed to numpy without a copy.
The Arrow form (``to="arrow"``) is made in the native module by the crate's
one Arrow mapping (``recordwire::arrow``, the same as ``recordwire export``'s
Parquet) and handed to pyarrow through the Arrow C data interface.
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Union

import numpy as np


class Bytes(NamedTuple):
    """Bytes values in Arrow's LargeBinary layout: value ``i`` is ``data[offsets[i]:offsets[i + 1]]``."""

    data: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:  # type: ignore[override]
        return max(len(self.offsets) - 1, 0)

    def value(self, i: int) -> bytes:
        """Value ``i`` as ``bytes`` (a copy)."""
        return self.data[self.offsets[i] : self.offsets[i + 1]].tobytes()

    def to_list(self) -> List[bytes]:
        """Every value as ``bytes`` (copies)."""
        raw = self.data.tobytes()
        o = self.offsets.tolist()
        return [raw[o[i] : o[i + 1]] for i in range(len(o) - 1)]


class Ragged(NamedTuple):
    """A var_len column: row ``r``'s values are ``values[row_splits[r]:row_splits[r + 1]]``."""

    values: Any
    row_splits: np.ndarray


class RaggedFrames(NamedTuple):
    """A sequence's var_len column: rows split into frames, frames into values."""

    values: Any
    row_splits: np.ndarray
    frame_splits: np.ndarray


class Padded(NamedTuple):
    """A padded column (fixed_len_sequence, a sequence's frames, OFRecord raw) and each row's length."""

    values: Any
    lengths: np.ndarray


class Sparse(NamedTuple):
    """TensorFlow's sparse form: ``indices`` ``[nnz, rank]``, ``values``, ``dense_shape``."""

    indices: np.ndarray
    values: Any
    dense_shape: tuple


Column = Union[np.ndarray, Bytes, List[memoryview], Ragged, RaggedFrames, Padded, Sparse]


def _values(parts: Dict[str, Any]) -> Any:
    values = parts["values"]
    if parts["dtype"] == "bytes" and "offsets" in parts:
        values = Bytes(values, parts["offsets"])
    return values


def column(parts: Dict[str, Any]) -> Column:
    """The public column of the native decoder's parts dict."""
    values = _values(parts)
    if "indices" in parts:
        n = len(parts["indices"]) // max(len(parts["dense_shape"]), 1)
        indices = parts["indices"].reshape(n, len(parts["dense_shape"]))
        return Sparse(indices, values, tuple(parts["dense_shape"]))
    layout = parts["layout"]
    if layout == "ragged":
        return Ragged(values, parts["row_splits"])
    if layout == "ragged_frames":
        return RaggedFrames(values, parts["row_splits"], parts["frame_splits"])
    if "lengths" in parts:
        return Padded(values, parts["lengths"])
    return values


# ---- Arrow -------------------------------------------------------------


def pyarrow_module() -> Any:
    """pyarrow, or an ImportError that says how to get it."""
    try:
        import pyarrow as pa
    except ImportError as e:  # pragma: no cover - exercised without pyarrow
        raise ImportError("decode(to='arrow') needs pyarrow: pip install pyarrow") from e
    return pa
