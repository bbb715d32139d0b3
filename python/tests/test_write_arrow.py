"""``recordwire.write_arrow``: Arrow rows as a record file, local or in S3,
byte for byte ``Writer``'s records for the same rows, with the sidecar
index; columns with no feature form raise naming them, and a failed write
leaves nothing."""

import uuid

import numpy as np
import pytest

import recordwire

pa = pytest.importorskip("pyarrow", reason="pyarrow is installed by ./test.sh and .ci/run")


def table(n: int):
    return pa.table(
        {
            "label": pa.array(range(n), pa.int64()),
            "small": pa.array([i % 100 for i in range(n)], pa.int16()),
            "score": pa.array([i / 8 for i in range(n)], pa.float32()),
            "wide": pa.array([i / 3 for i in range(n)], pa.float64()),
            "text": pa.array([f"row {i}" for i in range(n)], pa.string()),
            "blob": pa.array([bytes([i % 256]) * (i % 5) for i in range(n)], pa.large_binary()),
            "tokens": pa.array([list(range(i % 4)) for i in range(n)], pa.list_(pa.int64())),
            "pos": pa.array([[i, -i, 2 * i] for i in range(n)], pa.list_(pa.float32(), 3)),
        }
    )


def writer_records(t, path):
    """The same rows through ``Writer``: numpy arrays of the columns' types."""
    rows = t.to_pylist()
    with recordwire.Writer(path) as w:
        for r in rows:
            w.write(
                {
                    "label": np.array([r["label"]], np.int64),
                    "small": np.array([r["small"]], np.int16),
                    "score": np.array([r["score"]], np.float32),
                    "wide": np.array([r["wide"]], np.float64),
                    "text": [r["text"].encode()],
                    "blob": [r["blob"]],
                    "tokens": np.array(r["tokens"], np.int64),
                    "pos": np.array(r["pos"], np.float32),
                }
            )
    ds = recordwire.Dataset(str(path))
    return [bytes(ds.raw(i)) for i in range(len(ds))]


def raw(path):
    ds = recordwire.Dataset(str(path))
    return [bytes(ds.raw(i)) for i in range(len(ds))]


@pytest.mark.parametrize("name", ["out.tfrecord", "out.tfrecord.gz"])
def test_rows_are_writers_records_with_the_sidecar(tmp_path, name):
    t = table(300)
    # Several batches of one table, an iterable of batches, a reader.
    for data in (t, t.to_batches(max_chunksize=64), pa.RecordBatchReader.from_batches(t.schema, t.to_batches(100))):
        target = tmp_path / name
        assert recordwire.write_arrow(data, target) == 300
        assert raw(target) == writer_records(t, tmp_path / "writer.tfrecord")
        sidecar = tmp_path / (name + ".rwindex")
        assert sidecar.is_file()
        assert recordwire.Dataset(str(target), index=str(sidecar)).files == [str(target)]
        assert (target.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")


def test_ofrecord_and_pandas(tmp_path):
    pd = pytest.importorskip("pandas", reason="ray[data] brings pandas; ./test.sh installs ray")
    frame = pd.DataFrame({"a": np.arange(5, dtype=np.int32), "x": np.linspace(0, 1, 5)})
    target = tmp_path / "part-0"
    assert recordwire.write_arrow(frame, target, payload="ofrecord") == 5
    with recordwire.Writer(tmp_path / "ref.ofrecord", payload="ofrecord") as w:
        for i in range(5):
            w.write({"a": np.array([i], np.int32), "x": np.array([frame.x[i]], np.float64)})
    assert raw(target) == raw(tmp_path / "ref.ofrecord")


def test_to_s3_with_the_sidecar_beside_it(s3, tmp_path):
    bucket = f"arrow-{uuid.uuid4().hex[:8]}"
    s3.bucket(bucket)
    options = s3.options("none")
    url = f"s3://{bucket}/rows.tfrecord"
    t = table(120)
    assert recordwire.write_arrow(t, url, storage_options=options) == 120
    back = recordwire.Dataset(url, index=url + ".rwindex", storage_options=options)
    assert [bytes(back.raw(i)) for i in range(len(back))] == writer_records(t, tmp_path / "w.tfrecord")


def test_columns_without_a_feature_form_raise_and_nothing_is_written(tmp_path):
    target = tmp_path / "bad.tfrecord"
    dated = pa.table({"ok": [1, 2], "when": pa.array([1, 2], pa.date32())})
    with pytest.raises(TypeError, match='column "when"'):
        recordwire.write_arrow(dated, target)
    holed = pa.table({"l": pa.array([[1], [2, None]], pa.list_(pa.int64()))})
    with pytest.raises(ValueError, match='column "l", row 1'):
        recordwire.write_arrow(holed, target)
    with pytest.raises(TypeError, match="write_arrow takes"):
        recordwire.write_arrow("not a table", target)
    assert not target.exists() and not (tmp_path / "bad.tfrecord.rwindex").exists()
    # A null row leaves its feature out of that record.
    sparse = pa.table({"a": pa.array([1, None], pa.int64()), "b": [5, 6]})
    recordwire.write_arrow(sparse, target)
    assert list(recordwire.Dataset(str(target))[1].keys()) == ["b"]
