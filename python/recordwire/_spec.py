"""TensorFlow-style feature specs: ``FixedLen``, ``VarLen``, ``FixedLenSequence``.

A dict of these (or of TensorFlow's own ``tf.io.FixedLenFeature``,
``VarLenFeature`` and ``FixedLenSequenceFeature``) is turned into the JSON
spec that ``recordwire inspect --spec`` prints, which the native ``Spec``
reads.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

_DTYPES = {
    "int64": "int64",
    "float32": "float32",
    "float": "float32",
    "string": "bytes",
    "bytes": "bytes",
    "str": "bytes",
    "int32": "int32",
    "float64": "float64",
    "double": "float64",
    "int8": "int8",
    "uint8": "uint8",
}


def _dtype(dtype: Any) -> str:
    name = getattr(dtype, "name", None)  # tf.DType, numpy dtype
    if not isinstance(name, str):
        name = getattr(dtype, "__name__", None) or str(dtype)
    name = name.replace("tf.", "")
    # A name not known here goes into the JSON as it is: the native spec
    # then refuses it as it refuses a bad JSON spec (``recordwire.Error``,
    # kind ``invalid_spec``, naming the feature).
    return _DTYPES.get(name, name)


def _shape(shape: Any) -> list:
    if shape is None:
        return []
    if isinstance(shape, int):
        return [shape]
    dims = getattr(shape, "as_list", None)  # tf.TensorShape
    return [int(d) for d in (dims() if dims else shape)]


def _default(value: Any) -> Any:
    if value is None:
        return None
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if tolist is not None:
        value = tolist()

    def one(v: Any) -> Any:
        if isinstance(v, (bytes, bytearray)):
            return bytes(v).decode("utf-8", "surrogateescape")
        if isinstance(v, float) and not math.isfinite(v):
            return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
        return v

    if isinstance(value, (list, tuple)):
        flat: list = []

        def walk(v: Any) -> None:
            if isinstance(v, (list, tuple)):
                for x in v:
                    walk(x)
            else:
                flat.append(one(v))

        walk(value)
        return flat
    return one(value)


@dataclass(frozen=True)
class FixedLen:
    """A dense feature: ``[batch, *shape]``; ``default`` fills records that lack it."""

    shape: Union[int, Sequence[int]]
    dtype: Any
    default: Any = None

    def to_json_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"form": "fixed_len", "dtype": _dtype(self.dtype), "shape": _shape(self.shape)}
        if self.default is not None:
            d["default"] = _default(self.default)
        return d


@dataclass(frozen=True)
class VarLen:
    """A ragged feature: values + row_splits (or TensorFlow's sparse form)."""

    dtype: Any
    sparse: bool = False
    borrow: bool = False

    def to_json_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"form": "var_len", "dtype": _dtype(self.dtype)}
        if self.sparse:
            d["sparse"] = True
        if self.borrow:
            d["borrow"] = True
        return d


@dataclass(frozen=True)
class FixedLenSequence:
    """``[batch, max_len, *shape]`` padded with ``default``, plus the lengths."""

    shape: Union[int, Sequence[int]]
    dtype: Any
    allow_missing: bool = False
    default: Any = None

    def to_json_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {
            "form": "fixed_len_sequence",
            "dtype": _dtype(self.dtype),
            "shape": _shape(self.shape),
            "allow_missing": bool(self.allow_missing),
        }
        if self.default is not None:
            d["default"] = _default(self.default)
        return d


FeatureLike = Union[FixedLen, VarLen, FixedLenSequence, Mapping[str, Any], Any]


def feature_json(f: FeatureLike) -> Dict[str, Any]:
    """One feature as its JSON spec dict: ours, TensorFlow's, or a dict already."""
    if isinstance(f, (FixedLen, VarLen, FixedLenSequence)):
        return f.to_json_dict()
    if isinstance(f, Mapping):
        return dict(f)
    kind = type(f).__name__
    if kind == "FixedLenFeature":
        return FixedLen(f.shape, f.dtype, f.default_value).to_json_dict()
    if kind == "VarLenFeature":
        return VarLen(f.dtype, sparse=True).to_json_dict()
    if kind == "FixedLenSequenceFeature":
        return FixedLenSequence(f.shape, f.dtype, f.allow_missing, f.default_value).to_json_dict()
    if kind in ("SparseFeature", "RaggedFeature"):
        raise ValueError(f"{kind} is not supported: use VarLen (ragged or sparse=True)")
    raise TypeError(f"not a feature spec: {f!r}")


def is_feature_dict(d: Mapping[str, Any]) -> bool:
    """Whether ``d`` maps names to features (rather than being the JSON spec)."""
    return "features" not in d and "payload" not in d and "sequence" not in d


def spec_json(
    features: Mapping[str, FeatureLike],
    payload: str = "example",
    sequence: Optional[Mapping[str, FeatureLike]] = None,
) -> str:
    """The JSON spec text of a feature dict (and a sequence part for SequenceExample)."""
    out: Dict[str, Any] = {
        "payload": payload if sequence is None else "sequence_example",
        "features": {name: feature_json(f) for name, f in features.items()},
    }
    if sequence is not None:
        out["sequence"] = {name: feature_json(f) for name, f in sequence.items()}
    return json.dumps(out)


__all__: Tuple[str, ...] = ("FixedLen", "VarLen", "FixedLenSequence", "spec_json", "feature_json")
