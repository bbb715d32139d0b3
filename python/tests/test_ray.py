"""``recordwire.ray`` on a real two-node Ray cluster (``ray.cluster_utils.
Cluster``, two raylets on this machine): reads of local, compressed and S3
shards (the moto server of test_remote.py), whose rows equal what
``recordwire cat`` prints; read tasks on both nodes; row counts known
before any read; a round trip through ``write_records`` that tf.data and
``recordwire cat`` read back, byte for byte ``Writer``'s records; Ray's own
``read_tfrecords`` on the same files; and a damaged shard's error in the
driver with its kind, file, record and offset."""

import base64
import json
import os
import subprocess
import uuid
from pathlib import Path

import numpy as np
import pytest

import recordwire
from test_arrow import recordwire_bin

ray = pytest.importorskip("ray", reason="ray[data] is installed by ./test.sh and .ci/run: it must not be missing there")
pa = pytest.importorskip("pyarrow", reason="pyarrow is installed by ./test.sh and .ci/run")

import ray.data  # noqa: E402
from ray.data.datasource import ReadTask  # noqa: E402

import recordwire.ray as rwray  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    """Two Ray nodes of one CPU each on this machine, the driver attached."""
    from ray.cluster_utils import Cluster

    memory = 200 * 2**20
    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": memory, "include_dashboard": False},
    )
    c.add_node(num_cpus=1, object_store_memory=memory)
    try:
        # The test's own read wrapper (below) goes to the workers by value:
        # they cannot import this module.
        import sys

        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        ray.init(address=c.address, log_to_driver=False)
        c.wait_for_nodes()
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        # Blocks in task order: rows compare with the files' in id order.
        ctx.execution_options.preserve_order = True
        nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
        assert len(nodes) == 2, nodes
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


def record(i: int) -> dict:
    return {
        "label": np.array([i], np.int64),
        "score": np.array([i / 7], np.float32),
        "tokens": np.arange(i % 5, dtype=np.int64) * 3 - i,
        "text": [f"row {i}".encode()],
        "vec": np.array([i, -i, i / 4], np.float32),
    }


SIZES = {"a.tfrecord": 700, "b.tfrecord": 60, "c.tfrecord": 40, "d.tfrecord.gz": 500}


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Four shards (one GZIP) of consecutive records, with their sidecars."""
    d = tmp_path_factory.mktemp("ray-shards")
    start = 0
    files = []
    for name, n in SIZES.items():
        with recordwire.Writer(d / name) as w:
            for i in range(start, start + n):
                w.write(record(i))
        start += n
        files.append(str(d / name))
    recordwire.Dataset(files).write_index()
    return files


def cat_rows(path: str):
    """The records of ``path`` as ``recordwire cat`` prints them, as
    ``{feature: list of values}``."""
    out = subprocess.run([str(recordwire_bin()), "cat", path], check=True, capture_output=True).stdout
    rows = []
    for line in out.decode().splitlines():
        feats = json.loads(line)["features"]["feature"]
        row = {}
        for name, f in feats.items():
            ((kind, body),) = f.items()
            values = body.get("value", [])
            if kind == "int64_list":
                row[name] = [int(v) for v in values]
            elif kind == "float_list":
                row[name] = [float(np.float32(v)) for v in values]
            else:
                row[name] = [base64.b64decode(v) for v in values]
        rows.append(row)
    return rows


def flat(v) -> list:
    """A value of a row, flattened: bytes, ints, or float32 values."""
    if v is None:
        return []
    if isinstance(v, (bytes, bytearray, memoryview)):
        return [bytes(v)]
    if isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.dtype == object):
        return [x for item in v for x in flat(item)]
    a = np.asarray(v)
    if a.dtype.kind in "SO":
        return [bytes(x) for x in a.ravel()]
    if a.dtype.kind == "f":
        return [float(np.float32(x)) for x in a.ravel()]
    return [int(x) for x in a.ravel()]


def as_lists(row: dict) -> dict:
    """A Ray row's values as flat lists (a scalar is a list of one)."""
    return {k: flat(v) for k, v in row.items()}


class Noted(rwray.RecordDatasource):
    """The datasource, each read task also leaving a file named by the node
    it ran on in ``log`` (the nodes share this machine's disk)."""

    def __init__(self, *args, log: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.log = log

    def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
        tasks = super().get_read_tasks(parallelism, per_task_row_limit, data_context)
        return [ReadTask(_Noting(t.read_fn, self.log), t.metadata, schema=t.schema) for t in tasks]


class _Noting:
    def __init__(self, read, log):
        self.read, self.log = read, log

    def __call__(self):
        node = ray.get_runtime_context().get_node_id()
        Path(self.log, f"{node}-{uuid.uuid4().hex}").touch()
        yield from self.read()


def test_rows_equal_cat_on_both_nodes_and_counts_come_before_any_read(cluster, shards, tmp_path):
    expected = [r for f in shards for r in cat_rows(f)]
    log = tmp_path / "log"
    log.mkdir()
    source = Noted(shards, log=str(log))
    tasks = source.get_read_tasks(6)
    # The large shard is split, the small ones grouped: rows from the indexes.
    assert sum(t.metadata.num_rows for t in tasks) == len(expected) == sum(SIZES.values())
    assert len(tasks) == 6
    assert any(len(t.metadata.input_files) > 1 for t in tasks)
    assert sum(f.endswith("a.tfrecord") for t in tasks for f in t.metadata.input_files) > 1
    ds = ray.data.read_datasource(source, override_num_blocks=6)
    assert ds.count() == len(expected)
    assert list(log.iterdir()) == [], "count() read nothing: the metadata gave it"
    rows = ds.take_all()
    assert [as_lists(r) for r in rows] == expected
    nodes = {p.name.split("-")[0] for p in log.iterdir()}
    assert len(nodes) == 2, f"read tasks ran on {nodes}"


def test_rows_from_s3_equal_the_local_ones(cluster, shards, s3):
    bucket = f"ray-{uuid.uuid4().hex[:8]}"
    s3.bucket(bucket)
    for f in shards:
        s3.put(bucket, os.path.basename(f), Path(f).read_bytes())
    options = s3.options("none")
    remote = rwray.read_records(f"s3://{bucket}/*.tfrecord*", storage_options=options, override_num_blocks=4)
    local = rwray.read_records(shards, override_num_blocks=4)
    assert remote.count() == sum(SIZES.values())
    assert [as_lists(r) for r in remote.take_all()] == [as_lists(r) for r in local.take_all()]


def test_projection_shuffle_torch_batches_and_streaming_split(cluster, shards):
    ds = rwray.read_records(shards, features=["label", "tokens"], override_num_blocks=4)
    assert ds.schema().names == ["label", "tokens"]
    labels = sorted(r["label"] for r in ds.random_shuffle(seed=3).take_all())
    assert labels == list(range(sum(SIZES.values())))
    # Ray's own select_columns is pushed down to the decoder.
    picked = rwray.read_records(shards).select_columns(["score"])
    assert picked.schema().names == ["score"]
    batches = list(rwray.read_records(shards, features=["label", "vec"]).iter_torch_batches(batch_size=256))
    import torch

    assert isinstance(batches[0]["vec"], torch.Tensor) and batches[0]["vec"].shape[1:] == (3,)
    assert sum(len(b["label"]) for b in batches) == sum(SIZES.values())
    a, b = ds.streaming_split(2, equal=True)
    import threading

    seen: list = [[], []]

    def consume(k, it):
        for batch in it.iter_batches(batch_size=100):
            seen[k].extend(int(x) for x in batch["label"])

    threads = [threading.Thread(target=consume, args=(k, it)) for k, it in enumerate((a, b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen[0] and seen[1]
    assert sorted(seen[0] + seen[1]) == list(range(sum(SIZES.values())))


def test_round_trip_through_write_records(cluster, shards, tmp_path):
    tf = pytest.importorskip("tensorflow", reason="tensorflow-cpu is installed by ./test.sh and .ci/run")
    original = rwray.read_records(shards, override_num_blocks=3)
    out = tmp_path / "written"
    written = rwray.write_records(original, str(out))
    assert written and all(Path(w).is_file() and Path(w + ".rwindex").is_file() for w in written)
    back = rwray.read_records(written)
    assert sorted(map(as_lists, back.take_all()), key=lambda r: r["label"]) == sorted(
        map(as_lists, original.take_all()), key=lambda r: r["label"]
    )
    # recordwire cat and tf.data read the written shards; each shard's bytes
    # are Writer's for the same rows (column order, the same kinds).
    spec = rwray.RecordDatasource(written).spec
    total = 0
    for path in written:
        rows = cat_rows(path)
        total += len(rows)
        raw = [bytes(r) for r in tf.data.TFRecordDataset(path).as_numpy_iterator()]
        assert len(raw) == len(rows)
        mine = tmp_path / "writer.tfrecord"
        with recordwire.Writer(mine) as w:
            for r in rows:
                w.write(
                    {
                        "label": np.array(r["label"], np.int64),
                        "score": np.array(r["score"], np.float32),
                        "tokens": np.array(r["tokens"], np.int64),
                        "text": r["text"],
                        "vec": np.array(r["vec"], np.float32),
                    }
                )
        assert [bytes(x) for x in recordwire.Dataset(str(mine)).get_many(range(len(rows)), raw=True)] == raw
    assert total == sum(SIZES.values())
    assert spec.features == ["label", "score", "tokens", "text", "vec"]


def test_ray_read_tfrecords_gives_the_same_values(cluster, shards, tmp_path):
    # Ray's default path maps a one-value list to a scalar and a longer one
    # to a list, so a feature whose records hold one value or several (here
    # `tokens`, 0 to 4 values) fails there ("Types mismatch: int64 !=
    # list<item: int64>"): compared are the features of fixed length,
    # written out by write_records first.
    fixed = rwray.read_records(shards, features=["label", "score", "text", "vec"])
    written = rwray.write_records(fixed, str(tmp_path / "fixed"))
    ours = sorted(map(as_lists, rwray.read_records(written).take_all()), key=lambda r: r["label"])
    theirs = sorted(map(as_lists, ray.data.read_tfrecords(written).take_all()), key=lambda r: r["label"])
    assert len(theirs) == sum(SIZES.values())
    assert theirs == ours


def frame_starts(data: bytes) -> list:
    """The offset of each TFRecord frame of ``data``."""
    starts, pos = [], 0
    while pos < len(data):
        starts.append(pos)
        pos += 12 + int.from_bytes(data[pos : pos + 8], "little") + 4
    return starts


def test_a_damaged_shard_raises_recordwire_error_in_the_driver(cluster, shards, tmp_path):
    data = bytearray(Path(shards[0]).read_bytes())
    victim = 333
    start = frame_starts(bytes(data))[victim]
    data[start + 12 + 5] ^= 0xFF  # in the payload: the data CRC fails
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    # What the same read says in this process.
    with pytest.raises(recordwire.Error) as here:
        recordwire.Dataset(str(bad))[victim]
    spec = rwray.RecordDatasource(shards[0]).spec
    with pytest.raises(recordwire.Error) as got:
        rwray.read_records([str(bad)], spec=spec, override_num_blocks=2).materialize()
    e = got.value
    assert e.kind == "data_crc_mismatch", e
    assert e.file == str(bad)
    assert e.record == victim
    assert e.offset == here.value.offset
    assert here.value.kind == "data_crc_mismatch" and here.value.record == victim


def test_a_feature_an_unsampled_record_lacks_reads(cluster, tmp_path):
    # 20,000 records, record 12,390 (outside every run of the sample)
    # without `x`: the sampled spec gives `x` a default, and says so.
    path = tmp_path / "lacking.tfrecord"
    with recordwire.Writer(path) as w:
        for i in range(20_000):
            w.write({"label": i} if i == 12_390 else {"label": i, "x": np.float32(i)})
    with pytest.warns(UserWarning, match=r"sample of \d+ of 20000 records.*recordwire\.infer_spec\(paths\)"):
        ds = rwray.read_records(str(path))
    frame = ds.to_pandas()
    assert len(frame) == 20_000
    assert frame["x"][12_390] == 0.0 and frame["x"][12_391] == 12_391.0
    # A spec without the default fails at the record, suggesting the full inference.
    spec = {"label": recordwire.FixedLen((), "int64"), "x": recordwire.FixedLen((), "float32")}
    with pytest.raises(recordwire.Error, match=r"recordwire\.infer_spec\(paths\)") as info:
        rwray.read_records(str(path), spec=spec).materialize()
    assert info.value.record == 12_390 and info.value.kind == "feature_error"


def test_read_tasks_are_sized_by_bytes():
    mib = 1 << 20
    # Ray's default parallelism is not asked: ~64 MiB a task, a multiple of
    # the CPUs, never under 4,096 rows a task.
    assert rwray.default_tasks(200_000, 184_000_000, 2) == 4
    assert rwray.default_tasks(200_000, 184_000_000, 1) == 3
    assert rwray.default_tasks(10_000, 10 * mib, 2) == 2
    assert rwray.default_tasks(10_000, 10 * mib, 16) == 2
    assert rwray.default_tasks(3_000, 3 * mib, 8) == 1
    assert rwray.default_tasks(1_000_000, 4096 * mib, 2) == 64
    assert rwray.default_tasks(0, 0, 2) == 1


def test_default_read_tasks_split_by_bytes(cluster, tmp_path):
    # Two shards, one of small records and one of large ones: tasks hold
    # about the same bytes, not the same rows.
    small, large = tmp_path / "small.tfrecord", tmp_path / "large.tfrecord"
    with recordwire.Writer(small) as w:
        for i in range(12_000):
            w.write({"id": i})
    with recordwire.Writer(large) as w:
        for i in range(12_000):
            w.write({"id": i, "blob": b"x" * 200})
    source = rwray.RecordDatasource([str(small), str(large)])
    tasks = source.get_read_tasks(2)
    assert len(tasks) == 2
    sizes = [t.metadata.size_bytes for t in tasks]
    assert max(sizes) < 1.1 * min(sizes), sizes
    assert tasks[0].metadata.num_rows > tasks[1].metadata.num_rows
    ds = rwray.read_records([str(small), str(large)])
    assert ds.count() == 24_000
    assert ds.materialize().num_blocks() >= 2


def test_a_directory_written_by_write_records_reads_back(cluster, shards, tmp_path):
    out = tmp_path / "out"
    written = rwray.write_records(rwray.read_records(shards, override_num_blocks=3), str(out))
    assert len(written) >= 2
    back = rwray.read_records(str(out))
    assert back.count() == sum(SIZES.values())
    assert sorted(int(r["label"]) for r in back.take_all()) == list(range(sum(SIZES.values())))


def test_an_event_file_is_warned_once(cluster, tmp_path):
    import struct

    path = tmp_path / "events.out.tfevents"
    with recordwire.Writer(path, payload="raw") as w:
        for i in range(20):
            w.write(b"\x09" + struct.pack("<d", 1.7e9 + i) + bytes([0x10, i]))
    with pytest.warns(recordwire.PayloadWarning, match=r'TensorBoard tensorflow\.Event.*payload="raw"') as caught:
        ds = rwray.read_records(str(path))
        assert ds.count() == 20
    assert len([w for w in caught if issubclass(w.category, recordwire.PayloadWarning)]) == 1


def test_records_of_any_message_by_field_paths(cluster):
    """message= and columns=: each record read as the message, one column per
    field path, the rows equal to Dataset.decode's on the driver (whose
    columns the schema tests check against protobuf)."""
    import pyarrow as pa

    from recordwire import Dataset, Schema

    fixtures = Path(__file__).resolve().parents[2] / "testdata" / "schema"
    schema = Schema.from_descriptor_set(fixtures / "shapes.pb", "rwtest.Shapes")
    path = str(fixtures / "shapes.tfrecord")
    paths = ["f_int64", "r_int32", "inner.a", "color"]
    ds = rwray.read_records(path, message=schema, columns=paths, override_num_blocks=3)
    assert ds.schema().names == paths
    got = pa.Table.from_pylist(ds.take_all())
    local = Dataset(path, message=schema)
    want = local.decode(list(range(len(local))), paths, to="arrow")
    assert got.num_rows == want.num_rows == len(local)
    for name in paths:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
    # By default the top-level fields; features= picks among the columns.
    whole = rwray.read_records(path, message=schema)
    assert whole.schema().names == schema.field_names
    picked = rwray.read_records(path, message=schema, features=["f_string"])
    assert picked.schema().names == ["f_string"]
    assert picked.count() == len(local)
    with pytest.raises(ValueError, match="message"):
        rwray.read_records(path, columns=paths)
