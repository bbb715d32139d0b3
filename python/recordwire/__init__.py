"""recordwire: zero-copy TFRecord/OFRecord reading and batched decoding.

The classes are those of the native module ``recordwire._native``, built
from the ``recordwire`` Rust crate.
"""

from recordwire._native import Dataset, Error, PanicError, Spec, __version__

__all__ = ["Dataset", "Error", "PanicError", "Spec", "__version__"]
