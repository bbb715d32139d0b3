"""decode's column forms (padded lengths, sparse, sequences), TF-style specs,
the Arrow form (no copy), get_many and index files."""

import json

import numpy as np
import pytest

import recordwire
from conftest import TESTDATA

REF = TESTDATA / "ref"
SMALL = REF / "small.tfrecord"


def test_tensorflow_style_specs_match_json():
    ds = recordwire.Dataset(str(SMALL))
    ids = [3, 1, 4]
    via_json = ds.decode(ids, '{"features": {"label": {"form": "fixed_len", "dtype": "int64", "shape": []},'
                              ' "bbox": {"form": "var_len", "dtype": "float32"}}}')
    via_tf = ds.decode(ids, {"label": recordwire.FixedLen((), "int64"), "bbox": recordwire.VarLen("float")})
    assert via_tf["label"].tolist() == via_json["label"].tolist()
    assert isinstance(via_tf["bbox"], recordwire.Ragged)
    assert via_tf["bbox"].values.tolist() == via_json["bbox"].values.tolist()
    assert via_tf["bbox"].row_splits.tolist() == [0, 4, 8, 12]
    spec = recordwire.spec({"label": recordwire.FixedLen([], "int64", default=-1)})
    assert json.loads(spec.to_json())["features"]["label"]["default"] in (-1, [-1])
    # A bad dtype is the JSON spec's invalid_spec (issue 37, point 14).
    with pytest.raises(recordwire.Error, match="dtype") as e:
        ds.decode(ids, {"label": recordwire.FixedLen((), "complex64")})
    assert e.value.kind == "invalid_spec"
    with pytest.raises(TypeError):
        ds.decode(ids, {"label": 3})


def test_sparse_and_padded_forms(tmp_path):
    out = tmp_path / "v.tfrecord"
    rows = [[1, 2, 3], [], [4]]
    with recordwire.Writer(out) as w:
        for r in rows:
            w.write({"v": np.array(r, dtype=np.int64)})
    ds = recordwire.Dataset(str(out))
    sparse = ds.decode([0, 1, 2], {"v": recordwire.VarLen("int64", sparse=True)})["v"]
    assert isinstance(sparse, recordwire.Sparse)
    assert sparse.indices.tolist() == [[0, 0], [0, 1], [0, 2], [2, 0]]
    assert sparse.values.tolist() == [1, 2, 3, 4]
    assert sparse.dense_shape == (3, 3)
    padded = ds.decode([0, 1, 2], {"v": recordwire.FixedLenSequence((), "int64", allow_missing=True, default=-1)})["v"]
    assert isinstance(padded, recordwire.Padded)
    assert padded.values.tolist() == [[1, 2, 3], [-1, -1, -1], [4, -1, -1]]
    assert padded.lengths.tolist() == [3, 0, 1]


def test_sequence_example_columns():
    ds = recordwire.Dataset(str(REF / "sequence_examples.tfrecord"))
    assert ds.payload == "sequence_example"
    lines = [json.loads(l) for l in (REF / "sequence_examples.jsonl").read_text().split("\n") if l]
    # Pick a feature list present with int64 frames in some record.
    names = {}
    for rec in lines:
        for name, fl in rec.get("feature_lists", {}).get("feature_list", {}).items():
            kinds = {k for f in fl.get("feature", []) for k in f}
            if kinds == {"int64_list"}:
                names.setdefault(name, 0)
                names[name] += 1
    assert names, "the reference file has int64 feature lists"
    name = max(names, key=names.get)
    spec = {"payload": "sequence_example", "features": {},
            "sequence": {name: {"form": "var_len", "dtype": "int64"}}}
    ids = [i for i, rec in enumerate(lines) if name in rec.get("feature_lists", {}).get("feature_list", {})
           and all("int64_list" in f for f in rec["feature_lists"]["feature_list"][name].get("feature", []))]
    got = ds.decode(ids, spec)["sequence"][name]
    assert isinstance(got, recordwire.RaggedFrames)
    for row, i in enumerate(ids):
        frames = lines[i]["feature_lists"]["feature_list"][name].get("feature", [])
        f0, f1 = got.row_splits[row], got.row_splits[row + 1]
        assert f1 - f0 == len(frames)
        for k, frame in enumerate(frames):
            a, b = got.frame_splits[f0 + k], got.frame_splits[f0 + k + 1]
            assert got.values[a:b].tolist() == [int(v) for v in frame["int64_list"].get("value", [])]


def test_arrow_batch_shares_the_decoded_buffers():
    pa = pytest.importorskip("pyarrow", reason="pyarrow is installed by ./test.sh and .ci/run")
    ds = recordwire.Dataset(str(SMALL))
    spec = {"label": recordwire.FixedLen((), "int64"), "bbox": recordwire.FixedLen(4, "float32"),
            "image": recordwire.FixedLen((), "bytes")}
    spec_json = json.loads(recordwire.spec(spec).to_json())
    rb = ds.decode(list(range(len(ds))), spec_json, to="arrow")
    assert isinstance(rb, pa.RecordBatch)
    assert rb.num_rows == len(ds)
    # One mapping with export's Parquet (test_arrow.py): nothing is null.
    item = lambda t: pa.field("item", t, nullable=False)  # noqa: E731
    assert not any(f.nullable for f in rb.schema)
    assert rb.schema.field("label").type == pa.int64()
    assert rb.schema.field("bbox").type == pa.list_(item(pa.float32()), 4)
    assert rb.schema.field("image").type == pa.large_binary()
    numpy = ds.decode(list(range(len(ds))), spec_json)
    assert rb.column("label").to_pylist() == numpy["label"].tolist()
    assert rb.column("bbox").to_pylist() == numpy["bbox"].tolist()
    assert rb.column("image").to_pylist() == numpy["image"].to_list()
    # No copy: the Arrow data buffer is 64-byte aligned decoder memory
    # (handed over through the Arrow C data interface).
    assert rb.column("label").buffers()[1].address % 64 == 0
    ragged = ds.decode([0, 1], {"bbox": recordwire.VarLen("float32")}, to="arrow")
    assert ragged.schema.field("bbox").type == pa.large_list(item(pa.float32()))
    assert ragged.column("bbox").to_pylist() == numpy["bbox"][:2].tolist()
    with pytest.raises(ValueError):
        ds.decode([0], spec_json, to="pandas")


def test_get_many_keeps_request_order():
    ds = recordwire.Dataset(str(REF / "examples.tfrecord"))
    ids = [5, 0, 39, 5, -1, 17]
    raws = ds.get_many(ids, raw=True)
    assert [bytes(r) for r in raws] == [bytes(ds.raw(i)) for i in ids]
    dicts = ds.get_many(np.array([3, 1], dtype=np.int64))
    assert [sorted(d) for d in dicts] == [sorted(ds[3]), sorted(ds[1])]
    with pytest.raises(IndexError):
        ds.get_many([0, len(ds)])


@pytest.mark.parametrize("fmt", ["native", "dali", "lirs"])
def test_index_files_load_back(tmp_path, fmt):
    data = tmp_path / "small.tfrecord"
    data.write_bytes(SMALL.read_bytes())
    ds = recordwire.Dataset(str(data))
    path = tmp_path / f"small.{fmt}"
    assert ds.write_index(str(path), format=fmt) == [path]
    back = recordwire.Dataset(str(data), index=str(path))
    assert [bytes(back.raw(i)) for i in range(len(back))] == [bytes(ds.raw(i)) for i in range(len(ds))]
    if fmt == "native":
        (sidecar,) = ds.write_index()
        assert sidecar.name == "small.tfrecord.rwindex" and sidecar.exists()
    else:
        with pytest.raises(ValueError):
            ds.write_index(format=fmt)


def test_index_is_a_deprecated_alias_of_write_index(tmp_path):
    data = tmp_path / "small.tfrecord"
    data.write_bytes(SMALL.read_bytes())
    ds = recordwire.Dataset(str(data))
    path = tmp_path / "small.dali"
    # The old name and its positional arguments still work, with a warning
    # that points at the caller.
    with pytest.warns(DeprecationWarning, match="write_index") as caught:
        assert ds.index(str(path), "dali") == [path]
    assert caught[0].filename == __file__
    assert path.exists()
    with pytest.warns(DeprecationWarning):
        (sidecar,) = ds.index()
    assert sidecar.name == "small.tfrecord.rwindex"
    # write_index takes its format by keyword only.
    with pytest.raises(TypeError):
        ds.write_index(str(path), "dali")


def test_options_are_keyword_only(tmp_path):
    with pytest.raises(TypeError):
        recordwire.Dataset(str(SMALL), None, "tfrecord")
    ds = recordwire.Dataset(str(SMALL))
    with pytest.raises(TypeError):
        ds.get_many([0], True)
    with pytest.raises(TypeError):
        ds.decode([0], {"label": recordwire.FixedLen([], "int64")}, 2)
    with pytest.raises(TypeError):
        ds.order("shuffle", 3)
    with pytest.raises(TypeError):
        recordwire.Writer(tmp_path / "x.tfrecord", "tfrecord")
    # The same calls with keywords.
    assert len(recordwire.Dataset(str(SMALL), index=None, framing="tfrecord")) == len(ds)
    assert ds.order("shuffle", seed=3).tolist() == ds.order(mode="shuffle", seed=3).tolist()


def test_stale_index_is_refused(tmp_path):
    data = tmp_path / "a.tfrecord"
    data.write_bytes(SMALL.read_bytes())
    idx = tmp_path / "a.idx"
    recordwire.Dataset(str(data)).write_index(str(idx))
    data.write_bytes(SMALL.read_bytes()[: -143])  # one record fewer
    with pytest.raises(recordwire.Error) as info:
        recordwire.Dataset(str(data), index=str(idx))
    assert info.value.kind == "stale_index"
