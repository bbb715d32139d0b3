"""``write_arrow``: Arrow tables and record batches written as a record file."""

from __future__ import annotations

from typing import Any, Iterator, Literal, Mapping, Optional, Union

from recordwire._dataset import PathLike
from recordwire._native import ArrowWriter


def _batches(data: Any) -> Iterator[Any]:
    """The record batches of ``data``: a pyarrow ``Table``, ``RecordBatch``
    or ``RecordBatchReader``, a pandas ``DataFrame``, anything with
    ``__arrow_c_stream__``, or an iterable of these."""
    import pyarrow as pa

    if isinstance(data, pa.RecordBatch):
        yield data
    elif isinstance(data, pa.Table):
        yield from data.to_batches()
    elif isinstance(data, pa.RecordBatchReader):
        yield from data
    elif hasattr(data, "__arrow_c_stream__"):
        yield from pa.RecordBatchReader.from_stream(data)
    elif type(data).__name__ == "DataFrame" and hasattr(data, "to_records"):
        yield from pa.Table.from_pandas(data, preserve_index=False).to_batches()
    elif isinstance(data, (str, bytes)) or not hasattr(data, "__iter__"):
        raise TypeError(
            f"write_arrow takes a pyarrow Table, RecordBatch or RecordBatchReader (or an "
            f"iterable of them), not {type(data).__name__}"
        )
    else:
        for part in data:
            yield from _batches(part)


def ipc_stream(batch: Any) -> bytes:
    """A record batch (or table) as one Arrow IPC stream, what the native
    writer reads: a copy, and no ``unsafe`` at the boundary."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as w:
        w.write(batch)
    return sink.getvalue().to_pybytes()


def write_arrow(
    data: Any,
    path: Union[PathLike, str],
    *,
    payload: Literal["example", "ofrecord"] = "example",
    compression: Optional[Literal["none", "gzip", "zlib"]] = None,
    gzip_blocks: Optional[int] = None,
    index: bool = True,
    storage_options: Optional[Mapping[str, Union[str, bool, int, float]]] = None,
) -> int:
    """Writes the rows of ``data`` (a pyarrow ``Table``, ``RecordBatch``,
    ``RecordBatchReader``, pandas ``DataFrame``, or an iterable of them) as
    the record file ``path`` (a local path or a URL such as ``s3://...``);
    returns the number of records.

    One record per row, one feature per column, in column order: ints ->
    ``int64_list`` (``int32_list`` for Int8-32 in an OFRecord), floats ->
    ``float_list`` (Float64 -> ``double_list`` in an OFRecord), binary and
    strings -> ``bytes_list``, lists and fixed-size lists of those (nested
    to any depth) -> the flattened list; a null row leaves its feature out.
    These are the kinds ``Writer`` gives numpy arrays of the same types, so
    the bytes are ``Writer``'s for the same rows. Any other type (dates,
    structs, dictionaries) raises ``TypeError`` naming the column; a null
    inside a list or a UInt64 beyond int64 raises ``ValueError`` naming the
    column and row. Compression comes from ``compression``, ``gzip_blocks``
    or the name (``.gz``, ``.zlib``). The file appears whole or not at all
    (a temporary renamed, or one ``PUT``), then, with ``index``, its sidecar
    index (``PATH.rwindex``; a checkpoint index for a compressed file).
    """
    writer = ArrowWriter(
        str(path),
        payload=payload,
        compression=compression,
        gzip_blocks=gzip_blocks,
        index=index,
        storage_options=storage_options,
    )
    try:
        for batch in _batches(data):
            if batch.num_rows:
                writer.write_ipc(ipc_stream(batch))
        return writer.close()
    except BaseException:
        writer.abort()
        raise
