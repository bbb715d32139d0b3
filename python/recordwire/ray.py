"""Ray Data: read record files into a ``ray.data.Dataset`` and write one out
as record files, on the cluster.

``read_records(paths, ...)`` plans read tasks from the files' indexes: each
task reads a range of record ids of one file (a large file is read by many
tasks, small files are grouped into one), decodes it with the batch decoder
into Arrow record batches, and checks every CRC as any recordwire read does.
Tasks carry paths and id ranges, not open files: each opens what it reads
(local, compressed or remote; remote indexes come from the node's index
cache after the first open). ``write_records(ds, path, ...)`` writes one
shard per write task, atomically, with its sidecar index.

Errors of a read task (a damaged record, a stale index, the network) reach
the driver as ``recordwire.Error`` (``kind``, ``file``, ``record``,
``offset``), which Ray re-raises as an instance of that class.

Importing this module imports ``ray``.
"""

from __future__ import annotations

import json
import math
import os
import uuid
import warnings
from typing import Any, Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Sequence, Tuple, Union

import ray.data
from ray.data.block import BlockMetadata
from ray.data.datasource import Datasink, Datasource, ReadTask

from recordwire._arrow_write import ipc_stream
from recordwire._dataset import SAMPLE_RECORDS, Dataset, PathLike, PayloadWarning, StorageValue, as_spec
from recordwire._native import ArrowWriter, Schema, Spec

__all__ = ["RecordDatasink", "RecordDatasource", "read_records", "write_records"]

#: Records of a sample that ``spec=None`` infers the spec from, spread over
#: the files (the loader's ``spec="auto"`` sample: ``recordwire._dataset.
#: sampled_spec``).
SPEC_SAMPLE = SAMPLE_RECORDS

#: The data a read task of ``read_records`` aims at (as Ray's file
#: datasources size theirs by bytes): tasks of a few thousand rows each pay
#: a task's fixed cost for little work.
TARGET_TASK_BYTES = 64 << 20
#: The fewest rows a read task is given, however small its bytes.
MIN_TASK_ROWS = 4096


def default_tasks(rows: int, data_bytes: int, cpus: int) -> int:
    """The read tasks of ``read_records`` without ``override_num_blocks``:
    about ``TARGET_TASK_BYTES`` of records each, at least one per CPU where
    the data holds ``MIN_TASK_ROWS`` rows per CPU (rounded up to a multiple
    of the CPUs, so that no CPU is left with the last task alone), and never
    fewer than ``MIN_TASK_ROWS`` rows per task."""
    if rows <= 0:
        return 1
    cpus = max(1, int(cpus))
    tasks = max(1, math.ceil(data_bytes / TARGET_TASK_BYTES))
    most = max(1, rows // MIN_TASK_ROWS)
    tasks = max(tasks, min(cpus, most))
    if tasks > cpus:
        tasks = math.ceil(tasks / cpus) * cpus
    return max(1, min(tasks, most))


def _cpus() -> int:
    """The CPUs of the Ray cluster (Ray started if it is not)."""
    if not ray.is_initialized():
        ray.init()
    return int(ray.cluster_resources().get("CPU", 1))


class RecordDatasource(Datasource):
    """A ``ray.data.Datasource`` of record files (TFRecord or OFRecord,
    plain, GZIP/ZLIB or in object storage), read by index range and decoded
    into Arrow. See ``read_records``; ``ray.data.read_datasource(
    RecordDatasource(paths, ...))`` is the same."""

    def __init__(
        self,
        paths: Union[PathLike, Sequence[PathLike]],
        *,
        spec: Any = None,
        features: Optional[Sequence[str]] = None,
        payload: Literal["auto", "example", "sequence_example", "ofrecord"] = "auto",
        storage_options: Optional[Mapping[str, StorageValue]] = None,
        rows_per_block: int = 4096,
        verify_crc: bool = True,
        message: Optional[Schema] = None,
        columns: Optional[Sequence[str]] = None,
    ) -> None:
        super().__init__()
        if message is None and columns is not None:
            raise ValueError("columns= are field paths of a message: give message= too (features= picks features)")
        if message is not None and spec is not None:
            raise ValueError("message= reads columns by field path (columns=), not by a spec")
        if rows_per_block < 1:
            raise ValueError(f"rows_per_block must be at least 1, not {rows_per_block}")
        # Opened once on the driver: globs listed, indexes read (and kept in
        # the index cache), record counts known before any read.
        ds = Dataset(paths, payload=payload, verify_crc=verify_crc, storage_options=storage_options, message=message)
        self._files: List[str] = ds.files
        self._lengths: List[Tuple[int, int]] = ds._lengths
        self._options: Dict[str, Any] = dict(payload=payload, verify_crc=verify_crc)
        if storage_options:
            self._options["storage_options"] = dict(storage_options)
        self._rows_per_block = rows_per_block
        self._projection_map: Optional[Dict[str, str]] = None
        # A message's records: columns by field path (the top-level fields
        # unless columns= says), no spec.
        self._paths: Optional[List[str]] = None
        self._spec: Optional[Spec] = None
        # The Arrow schema of a decode: what every block has.
        self._schema: Any = None
        if message is not None:
            self._options["message"] = message
            self._paths = list(columns) if columns is not None else list(message.field_names)
            self._schema = ds.decode([], self._paths, to="arrow").schema
            if features is not None:
                self._check_features(features)
                self._projection_map = {f: f for f in features}
            return
        if spec is None:
            spec = ds._sampled(stacklevel=3)
        spec = as_spec(spec)
        if not isinstance(spec, Spec):
            spec = Spec(dict(spec)) if isinstance(spec, Mapping) else Spec.from_json(spec)
        self._spec = spec
        self._schema = ds.decode([], spec, to="arrow").schema
        if features is not None:
            self._check_features(features)
            self._projection_map = {f: f for f in features}

    def _check_features(self, features: Iterable[str]) -> None:
        known = set(self._schema.names) | (set(self._spec.features) if self._spec is not None else set())
        unknown = [f for f in features if f not in known]
        if unknown:
            raise ValueError(f"features {unknown} are not in the spec (it has {sorted(known)})")

    @property
    def spec(self) -> Optional[Spec]:
        """The decode spec (given, or inferred from a sample of records);
        None for the records of a ``message``, read by field paths."""
        return self._spec

    @property
    def paths(self) -> Optional[List[str]]:
        """The field paths read (``message=``), or None."""
        return None if self._paths is None else list(self._paths)

    @property
    def files(self) -> List[str]:
        """The files read, in id order (globs listed)."""
        return list(self._files)

    def num_rows(self) -> int:
        """Records in all files (known from the indexes, before any read)."""
        return sum(n for n, _ in self._lengths)

    def supports_projection_pushdown(self) -> bool:
        return True

    def _read_spec(self) -> Tuple[Union[Spec, List[str]], Any]:
        """The spec (or, for a message, the field paths) of the columns read
        (all, or the projection's) and their Arrow schema."""
        columns = self._get_data_columns()
        if columns is None:
            return (self._paths if self._spec is None else self._spec), self._schema  # type: ignore[return-value]
        self._check_features(columns)
        import pyarrow as pa

        kept = [self._schema.field(c) for c in self._schema.names if c in set(columns)]
        if self._spec is None:
            return [c for c in self._schema.names if c in set(columns)], pa.schema(kept)
        return _select(self._spec, columns), pa.schema(kept)

    def estimate_inmemory_data_size(self) -> Optional[int]:
        return sum(size for _, size in self._lengths)

    def get_read_tasks(
        self,
        parallelism: int,
        per_task_row_limit: Optional[int] = None,
        data_context: Any = None,
    ) -> List[ReadTask]:
        total = self.num_rows()
        if total == 0:
            return []
        # Split by bytes (a file's records taken as of its average size), at
        # record boundaries: each task about the same data.
        data = sum(max(1, size) for _, size in self._lengths)
        want = max(1, min(parallelism, total))
        per_task = data / want
        spec, schema = self._read_spec()
        spec_json = json.dumps(spec) if isinstance(spec, list) else spec.to_json()
        tasks: List[ReadTask] = []
        units: List[Tuple[str, int, int]] = []
        rows = size = 0

        def flush() -> None:
            nonlocal units, rows, size
            if not units:
                return
            meta = BlockMetadata(
                num_rows=rows,
                size_bytes=size,
                exec_stats=None,
                input_files=tuple(dict.fromkeys(f for f, _, _ in units)),
            )
            read = _Read(units, spec_json, self._options, self._rows_per_block)
            tasks.append(ReadTask(read, meta, schema=schema, per_task_row_limit=per_task_row_limit))
            units, rows, size = [], 0, 0

        for path, (n, data_len) in zip(self._files, self._lengths):
            record = max(1, data_len) / max(1, n)
            start = 0
            while start < n:
                # The last task takes what is left (rounding never makes one more).
                last = len(tasks) >= want - 1
                target = math.inf if last else per_task
                take = n - start if last else min(n - start, max(1, math.ceil((per_task - size) / record)))
                units.append((path, start, start + take))
                rows += take
                size += math.ceil(record * take)
                start += take
                if size >= target - record / 2:
                    flush()
        flush()
        return tasks


def _select(spec: Spec, columns: Sequence[str]) -> Spec:
    """``spec`` with only the features named in ``columns`` (a sequence
    feature also as ``sequence.NAME``), in the spec's order."""
    wanted = set(columns)
    doc = json.loads(spec.to_json())
    doc["features"] = {k: v for k, v in doc.get("features", {}).items() if k in wanted}
    if "sequence" in doc:
        doc["sequence"] = {
            k: v for k, v in doc["sequence"].items() if k in wanted or f"sequence.{k}" in wanted
        }
    return Spec.from_json(json.dumps(doc))


class _Read:
    """A read task's work: id ranges of files, decoded in blocks. A plain
    object (pickled to the worker), not a closure over an open dataset."""

    def __init__(
        self,
        units: List[Tuple[str, int, int]],
        spec_json: str,
        options: Dict[str, Any],
        rows_per_block: int,
    ) -> None:
        self.units = units
        self.spec_json = spec_json
        self.options = options
        self.rows_per_block = rows_per_block

    def __call__(self) -> Iterator[Any]:
        import pyarrow as pa

        # A list: field paths of a message (options hold the message).
        loaded = json.loads(self.spec_json)
        spec: Any = loaded if isinstance(loaded, list) else Spec.from_json(self.spec_json)
        for path, start, stop in self.units:
            with warnings.catch_warnings():
                # Warned once, where the driver opened the files.
                warnings.simplefilter("ignore", PayloadWarning)
                ds = Dataset(path, **self.options)
            for a in range(start, stop, self.rows_per_block):
                ids = range(a, min(stop, a + self.rows_per_block))
                batch = ds.decode(ids, spec, to="arrow")
                yield pa.Table.from_batches([batch])


def read_records(
    paths: Union[PathLike, Sequence[PathLike]],
    *,
    spec: Any = None,
    features: Optional[Sequence[str]] = None,
    payload: Literal["auto", "example", "sequence_example", "ofrecord"] = "auto",
    storage_options: Optional[Mapping[str, StorageValue]] = None,
    rows_per_block: int = 4096,
    verify_crc: bool = True,
    message: Optional[Schema] = None,
    columns: Optional[Sequence[str]] = None,
    override_num_blocks: Optional[int] = None,
    ray_remote_args: Optional[Dict[str, Any]] = None,
    concurrency: Optional[int] = None,
) -> "ray.data.Dataset":
    """Record files as a ``ray.data.Dataset`` of decoded rows, one column per
    feature (the Arrow mapping of ``Dataset.decode(..., to="arrow")``).

    ``paths``: what ``recordwire.Dataset`` opens (paths, globs, ``s3://``
    and other URLs, compressed files). ``spec``: the decode spec (a
    ``Spec``, its JSON, or a TensorFlow-style dict); ``None`` infers it from
    a sample of records spread over the files (``SPEC_SAMPLE``, as the
    loader's ``spec="auto"``), made permissive where the sample cannot be
    sure (a feature some sampled record lacks is ``var_len``, a
    ``fixed_len`` one gets a default), where ``recordwire inspect --spec``
    and ``recordwire.infer_spec`` read all of them. ``features``: read
    only these (Ray's own ``select_columns`` after the read is pushed down
    to the decoder too). Read tasks split the files by record-id range
    into parts of about the same bytes: ``override_num_blocks`` asks for
    that many tasks; by default (``default_tasks``) each task reads about
    ``TARGET_TASK_BYTES`` (64 MiB), with at least one task per CPU of the
    cluster where there are ``MIN_TASK_ROWS`` rows for each, and never
    fewer than ``MIN_TASK_ROWS`` rows a task. Each task yields blocks of
    ``rows_per_block`` rows. A spec inferred from a sample is warned as
    such (a ``UserWarning``); ``recordwire.infer_spec(paths)`` reads every
    record. Files whose records may not be tf.Examples are warned once
    (``recordwire.PayloadWarning``).

    Records of any protobuf message: ``message=recordwire.Schema...`` reads
    each record as that message, one column per field path of ``columns``
    (``["tracks.states.center_x", "scenario_id"]``; by default the
    message's top-level fields), typed as ``Dataset.decode(ids, paths,
    to="arrow")`` types them; ``spec`` does not apply, ``features`` (and
    Ray's ``select_columns``) pick among the columns.
    """
    source = RecordDatasource(
        paths,
        spec=spec,
        features=features,
        payload=payload,
        storage_options=storage_options,
        rows_per_block=rows_per_block,
        verify_crc=verify_crc,
        message=message,
        columns=columns,
    )
    if override_num_blocks is None:
        override_num_blocks = default_tasks(
            source.num_rows(), source.estimate_inmemory_data_size() or 0, _cpus()
        )
    return ray.data.read_datasource(
        source,
        override_num_blocks=override_num_blocks,
        ray_remote_args=ray_remote_args,
        concurrency=concurrency,
    )


class RecordDatasink(Datasink):
    """A ``ray.data.Datasink`` that writes record files: each write task
    writes one shard, ``{path}/{prefix}_{task:06d}.tfrecord`` (``.gz`` with
    GZIP, ``.ofrecord`` for OFRecord), atomically, with its sidecar index.
    See ``write_records``."""

    def __init__(
        self,
        path: str,
        *,
        payload: Literal["example", "ofrecord"] = "example",
        compression: Optional[Literal["gzip", "zlib"]] = None,
        gzip_blocks: Optional[int] = None,
        index: bool = True,
        storage_options: Optional[Mapping[str, StorageValue]] = None,
        prefix: Optional[str] = None,
    ) -> None:
        if payload not in ("example", "ofrecord"):
            raise ValueError(f"payload: example or ofrecord, not {payload!r}")
        self.path = str(path).rstrip("/")
        self.payload = payload
        self.compression = compression
        self.gzip_blocks = gzip_blocks
        self.index = index
        self.storage_options = dict(storage_options or {})
        self.prefix = prefix or uuid.uuid4().hex[:12]
        self.written: List[str] = []

    def _name(self, task: int) -> str:
        extension = ".ofrecord" if self.payload == "ofrecord" else ".tfrecord"
        if self.compression == "gzip" or (self.compression is None and self.gzip_blocks):
            extension += ".gz"
        elif self.compression == "zlib":
            extension += ".zlib"
        return f"{self.path}/{self.prefix}_{task:06d}{extension}"

    def write(self, blocks: Iterable[Any], ctx: Any) -> List[Tuple[str, int]]:
        import pyarrow as pa

        target = self._name(ctx.task_idx)
        if "://" not in self.path:
            os.makedirs(self.path, exist_ok=True)
        writer = ArrowWriter(
            target,
            payload=self.payload,
            compression=self.compression,
            gzip_blocks=self.gzip_blocks,
            index=self.index,
            storage_options=self.storage_options or None,
        )
        try:
            for block in blocks:
                table = block if isinstance(block, pa.Table) else pa.Table.from_pandas(block)
                if table.num_rows:
                    writer.write_ipc(ipc_stream(table))
            if writer.records == 0:
                writer.abort()
                return []
            return [(target, writer.close())]
        except BaseException:
            writer.abort()
            raise

    def on_write_complete(self, write_result: Any) -> None:
        self.written = sorted(
            path for returned in write_result.write_returns for path, _ in returned
        )


def write_records(
    ds: "ray.data.Dataset",
    path: str,
    *,
    payload: Literal["example", "ofrecord"] = "example",
    compression: Optional[Literal["gzip", "zlib"]] = None,
    gzip_blocks: Optional[int] = None,
    index: bool = True,
    storage_options: Optional[Mapping[str, StorageValue]] = None,
    prefix: Optional[str] = None,
    ray_remote_args: Optional[Dict[str, Any]] = None,
    concurrency: Optional[int] = None,
) -> List[str]:
    """Writes ``ds`` as record files in the directory (or store prefix)
    ``path``: one shard per write task, each written atomically (a local
    temporary renamed, or one ``PUT``) with its sidecar index (``index``).
    Rows become records with the Arrow mapping of ``recordwire.write_arrow``
    (ints -> int64_list, floats -> float_list, binary/strings ->
    bytes_list, lists of those -> the list; anything else raises naming the
    column). Returns the files written, sorted."""
    sink = RecordDatasink(
        path,
        payload=payload,
        compression=compression,
        gzip_blocks=gzip_blocks,
        index=index,
        storage_options=storage_options,
        prefix=prefix,
    )
    ds.write_datasink(sink, ray_remote_args=ray_remote_args, concurrency=concurrency)
    return sink.written
