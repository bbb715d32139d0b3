"""Grain adapter: a ``RandomAccessDataSource`` (``__len__``, ``__getitem__``)
for ``grain.MapDataset.source`` and Grain's ``DataLoader``.

Does not import ``grain`` itself (the protocol is structural); the source
pickles as its arguments, so Grain's worker processes reopen the files.
"""

from __future__ import annotations

import os
from typing import Any, Optional, SupportsIndex

from recordwire._dataset import Dataset

__all__ = ["DataSource"]


class DataSource:
    """Records by index: the record as a dict (``raw=False``) or its payload
    as ``bytes`` (``raw=True``; a copy, as Grain hands records across
    processes)."""

    def __init__(self, paths: Any, raw: bool = False, **open_args: Any) -> None:
        self._paths = paths
        self._open_args = open_args
        self._raw = raw
        self._ds: Optional[Dataset] = None
        self._pid = -1

    @property
    def dataset(self) -> Dataset:
        if self._ds is None or self._pid != os.getpid():
            self._ds = Dataset(self._paths, **self._open_args)
            self._pid = os.getpid()
        return self._ds

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, record_key: SupportsIndex) -> Any:
        i = int(record_key)
        if self._raw:
            return bytes(self.dataset.raw(i))
        return {k: (v if not isinstance(v, list) else [bytes(x) for x in v]) for k, v in self.dataset[i].items()}

    def __getstate__(self) -> dict:
        return {"_paths": self._paths, "_open_args": self._open_args, "_raw": self._raw, "_ds": None, "_pid": -1}

    def __repr__(self) -> str:
        return f"recordwire.grain.DataSource({self._paths!r}, raw={self._raw})"
