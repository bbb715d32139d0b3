"""recordwire: zero-copy TFRecord/OFRecord reading and batched decoding.

The native classes come from ``recordwire._native`` (built from the
``recordwire`` Rust crate); ``Dataset`` adds pickling, column types, orders
and Arrow output; ``Loader`` reads and decodes batches ahead on Rust
threads; ``write_arrow`` writes Arrow tables as record files.
Adapters: ``recordwire.torch``, ``recordwire.grain``, ``recordwire.ray``
(each imports its framework only when imported).
"""

from typing import Any as _Any
from typing import Literal as _Literal
from typing import Mapping as _Mapping
from typing import Optional as _Optional

from recordwire._arrow_write import write_arrow
from recordwire._columns import Bytes, Padded, Ragged, RaggedFrames, Sparse
from recordwire._dataset import Cursor, Dataset, GzDataset, PayloadWarning, Skipped, SkippedWarning, infer_spec
from recordwire._loader import LoadedBatch, Loader
from recordwire._native import (
    Error,
    IoError,
    NotFoundError,
    Order,
    PanicError,
    PermissionDeniedError,
    Schema,
    Spec,
    Writer,
    __version__,
)
from recordwire._spec import FixedLen, FixedLenSequence, VarLen
from recordwire._spec import spec_json as _spec_json


def spec(
    features: _Mapping[str, _Any],
    *,
    payload: _Literal["example", "sequence_example", "ofrecord"] = "example",
    sequence: _Optional[_Mapping[str, _Any]] = None,
) -> Spec:
    """A ``Spec`` from a TensorFlow-style dict (name -> ``FixedLen``/``VarLen``/
    ``FixedLenSequence`` or ``tf.io`` features), with a sequence part for
    SequenceExample."""
    return Spec.from_json(_spec_json(features, payload, sequence))


__all__ = [
    "Bytes",
    "Cursor",
    "Dataset",
    "Error",
    "FixedLen",
    "GzDataset",
    "FixedLenSequence",
    "IoError",
    "LoadedBatch",
    "Loader",
    "NotFoundError",
    "Order",
    "Padded",
    "PanicError",
    "PayloadWarning",
    "PermissionDeniedError",
    "Ragged",
    "RaggedFrames",
    "Schema",
    "Skipped",
    "SkippedWarning",
    "Sparse",
    "Spec",
    "VarLen",
    "Writer",
    "__version__",
    "infer_spec",
    "spec",
    "write_arrow",
]
