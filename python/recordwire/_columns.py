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
    """A var_len column: row ``r``'s values are ``values[row_splits[r]:row_splits[r + 1]]``.

    >>> r = Ragged(np.array([1, 2, 3], dtype=np.int64), np.array([0, 2, 2, 3]))
    >>> r.to_padded()
    Padded(values=array([[1, 2],
           [0, 0],
           [3, 0]]), lengths=array([2, 0, 1]))
    >>> [t.tolist() for t in r.to_nested().unbind()]  # doctest: +SKIP
    [[1, 2], [], [3]]
    """

    values: Any
    row_splits: np.ndarray

    def to_padded(self, pad_value: Any = 0) -> "Padded":
        """The rows padded with ``pad_value`` to the longest: ``Padded(values
        [rows, longest, ...], lengths [rows])``, numpy arrays (a copy of the
        values; ``values`` may be a numpy array or a CPU torch tensor). Bytes
        values have no padded form (``TypeError``)."""
        if isinstance(self.values, (Bytes, list)):
            raise TypeError("Ragged.to_padded pads numeric values; a bytes column's rows are lists of bytes")
        values = np.asarray(self.values)
        splits = np.asarray(self.row_splits, dtype=np.int64)
        lengths = np.diff(splits)
        width = int(lengths.max()) if len(lengths) else 0
        out = np.full((len(lengths), width) + values.shape[1:], pad_value, dtype=values.dtype)
        # Row-major order of the mask is the order of the values.
        out[np.arange(width) < lengths[:, None]] = values[splits[0] : splits[-1]] if len(splits) else values[:0]
        return Padded(out, lengths)

    def to_nested(self) -> Any:
        """The rows as a ``torch.nested`` tensor of the jagged layout over
        the same values and offsets (no copy of the values); imports torch.

        ``Ragged(values, splits).to_nested().unbind()`` gives row ``r`` as
        ``values[splits[r]:splits[r + 1]]``."""
        if isinstance(self.values, (Bytes, list)):
            raise TypeError("Ragged.to_nested needs numeric values; a bytes column's rows are lists of bytes")
        import torch  # lazily: recordwire does not depend on torch

        splits = torch.as_tensor(np.asarray(self.row_splits, dtype=np.int64))
        values = torch.as_tensor(self.values)
        if len(splits) == 0:  # no rows
            splits = torch.zeros(1, dtype=torch.int64)
        elif int(splits[0]) != 0:
            values, splits = values[int(splits[0]) :], splits - splits[0]
        return torch.nested.nested_tensor_from_jagged(values, offsets=splits)


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


def path_columns(batch: Any) -> Dict[str, Any]:
    """The numpy form of columns by field path (``Dataset.decode(ids, paths)``
    of a dataset with a ``message``), from their Arrow form: a column of
    numbers (or bools) with no nulls is a numpy array ``[rows]``; a list of
    such numbers with the same count in every row is a numpy array ``[rows,
    n]``, else ``Ragged(values, row_splits)``; any other column (strings,
    bytes, structs, maps, nested lists, nulls) stays the ``pyarrow`` array.
    Numbers are handed over without a copy where Arrow's buffers allow."""
    pa = pyarrow_module()
    import pyarrow.types as pat

    out: Dict[str, Any] = {}
    for name, col in zip(batch.schema.names, batch.columns):
        t = col.type
        if (pat.is_integer(t) or pat.is_floating(t) or pat.is_boolean(t)) and col.null_count == 0:
            out[name] = col.to_numpy(zero_copy_only=False)
        elif (pat.is_large_list(t) or pat.is_list(t)) and col.null_count == 0:
            inner = t.value_type
            flat = col.flatten()
            if (pat.is_integer(inner) or pat.is_floating(inner) or pat.is_boolean(inner)) and flat.null_count == 0:
                offsets = col.offsets.to_numpy().astype(np.int64, copy=False) - int(col.offsets[0].as_py())
                values = flat.to_numpy(zero_copy_only=False)
                lengths = np.diff(offsets)
                if len(lengths) and (lengths == lengths[0]).all():
                    out[name] = values.reshape(len(lengths), int(lengths[0]))
                else:
                    out[name] = Ragged(values, offsets)
            else:
                out[name] = col
        else:
            out[name] = col
    del pa
    return out
