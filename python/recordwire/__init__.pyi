from recordwire._native import Dataset as Dataset
from recordwire._native import Error as Error
from recordwire._native import PanicError as PanicError
from recordwire._native import Spec as Spec
from recordwire._native import __version__ as __version__

__all__ = ["Dataset", "Error", "PanicError", "Spec", "__version__"]
