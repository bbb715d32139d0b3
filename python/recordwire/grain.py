"""Grain adapter: a ``RandomAccessDataSource`` (``__len__``, ``__getitem__``)
for ``grain.MapDataset.source`` and Grain's ``DataLoader``.

Does not import ``grain`` itself (the protocol is structural); the source
pickles as its arguments, so Grain's worker processes reopen the files.
"""

from __future__ import annotations

from typing import Any, SupportsIndex

from recordwire._dataset import Dataset, Lazy, portable

__all__ = ["DataSource"]


class DataSource:
    """Records by index: the record as a dict (``raw=False``) or its payload
    as ``bytes`` (``raw=True``; a copy, as Grain hands records across
    processes)."""

    def __init__(self, paths: Any, *, raw: bool = False, **open_args: Any) -> None:
        self._lazy = Lazy(paths, **open_args)
        self._raw = raw

    @property
    def dataset(self) -> Dataset:
        return self._lazy.dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, record_key: SupportsIndex) -> Any:
        i = int(record_key)
        if self._raw:
            return bytes(self.dataset.raw(i))
        return portable(self.dataset[i])

    def __repr__(self) -> str:
        return f"recordwire.grain.DataSource({self._lazy!r}, raw={self._raw})"
