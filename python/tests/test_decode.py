"""Dataset.decode against the TensorFlow fixtures of testdata/batch/cases/
(written by testdata/batch/make.py from tf.io.parse_example; see the Rust
test tests/decode/tf_parse.rs): the records are framed into a TFRecord file,
decoded, and compared bit for bit with what TensorFlow gave."""

import base64
import json
import struct

import numpy as np
import pytest

import recordwire
from conftest import TESTDATA, write_tfrecord

CASES = TESTDATA / "batch" / "cases"
# Where recordwire keeps protobuf's rules against TF's fast parser (the Rust
# test's WIRE_DIVERGENCES, parse_example ones).
DIVERGENCES = {
    "feature_two_kinds",
    "int64_list_two_packed_chunks",
    "int64_list_unpacked_then_packed",
    "float_list_packed_odd_length",
    "map_entry_extra_field",
    "map_entry_key_only",
    "features_unknown_field",
    "unknown_kind_in_spec",
    "unknown_kind_var_len",
}


def ok_cases():
    out = []
    for path in sorted(CASES.glob("*.json")):
        case = json.loads(path.read_text())
        if case["api"] != "parse_example" or case["name"] in DIVERGENCES:
            continue
        if "error" in case["expect"]:
            continue
        out.append(pytest.param(case, id=case["name"]))
    return out


def error_cases():
    out = []
    for path in sorted(CASES.glob("*.json")):
        case = json.loads(path.read_text())
        if case["api"] != "parse_example" or case["name"] in DIVERGENCES:
            continue
        err = case["expect"].get("error")
        if err is None or err.get("record") is None:
            continue
        out.append(pytest.param(case, id=case["name"]))
    return out


def as_json_values(dtype, values):
    """Values as the fixture writes them: ints, float32 bit patterns, base64."""
    if dtype == "int64":
        return [int(v) for v in np.asarray(values).ravel()]
    if dtype == "float32":
        a = np.ascontiguousarray(np.asarray(values, dtype=np.float32).ravel())
        return [int(b) for b in a.view(np.uint32)]
    if dtype == "bytes":
        return [base64.b64encode(v).decode() for v in values]
    raise AssertionError(dtype)


def bytes_values(column):
    if isinstance(column, list):
        return [bytes(v) for v in column]
    data, offsets = column
    data = data.tobytes()
    return [data[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]


def dataset_of(tmp_path, case):
    payloads = [base64.b64decode(r) for r in case["records"]]
    path = write_tfrecord(tmp_path / "case.tfrecord", payloads)
    return recordwire.Dataset(str(path), payload="example"), len(payloads)


@pytest.mark.parametrize("case", ok_cases())
@pytest.mark.parametrize("threads", [1, 2])
def test_decode_equals_tensorflow(tmp_path, case, threads):
    ds, n = dataset_of(tmp_path, case)
    spec_json = case["spec"]
    spec = recordwire.Spec(spec_json)
    got = ds.decode(list(range(n)), spec, threads=threads)
    for name, want in case["expect"]["ok"].items():
        dtype = spec_json["features"][name]["dtype"]
        column = got[name]
        if isinstance(column, recordwire.Padded):
            # fixed_len_sequence: TF gives the padded dense tensor; the
            # lengths are recordwire's own (test_padded_lengths).
            column = column.values
        if "dense" in want:
            if dtype == "bytes":
                values = bytes_values(column)
                shape = want["dense"]["shape"]
                assert len(values) == int(np.prod(shape)), name
            else:
                assert list(column.shape) == want["dense"]["shape"], name
                values = column
            assert as_json_values(dtype, values) == want["dense"]["values"], name
        else:
            # var_len: (values, row_splits); TF gave the sparse form.
            values, splits = column
            sparse = want["sparse"]
            if dtype == "bytes":
                values = bytes_values(values)
            assert as_json_values(dtype, values) == sparse["values"], name
            indices = [[r, j] for r in range(len(splits) - 1) for j in range(splits[r + 1] - splits[r])]
            assert indices == sparse["indices"], name
            rows = len(splits) - 1
            widest = max((splits[r + 1] - splits[r] for r in range(rows)), default=0)
            assert [rows, int(widest)] == sparse["dense_shape"], name


@pytest.mark.parametrize("case", error_cases())
def test_decode_fails_where_tensorflow_does(tmp_path, case):
    ds, n = dataset_of(tmp_path, case)
    with pytest.raises(recordwire.Error) as info:
        ds.decode(list(range(n)), json.dumps(case["spec"]))
    assert info.value.kind in ("feature_error", "decode_error"), str(info.value)
    assert info.value.record == case["expect"]["error"]["record"]


def test_spec_forms():
    text = """{"features": {
        "label": {"form": "fixed_len", "dtype": "int64", "shape": []},
        "image": {"form": "fixed_len", "dtype": "bytes", "shape": [], "borrow": true},
        "bbox":  {"form": "fixed_len", "dtype": "float32", "shape": [4]}}}"""
    ds = recordwire.Dataset(str(TESTDATA / "ref" / "small.tfrecord"))
    for spec in (recordwire.Spec.from_json(text), text, json.loads(text), recordwire.Spec(json.loads(text))):
        got = ds.decode([2, 0, -1], spec)
        assert got["label"].tolist() == [7, 3, 6]
        assert got["label"].dtype == np.int64
        assert got["bbox"].shape == (3, 4)
        assert got["bbox"].dtype == np.float32
        assert [len(v) for v in got["image"]] == [64, 64, 64]
    spec = recordwire.Spec.from_json(text)
    assert spec.payload == "example"
    assert sorted(spec.features) == ["bbox", "image", "label"]
    assert recordwire.Spec.from_json(spec.to_json()).to_json() == spec.to_json()


def test_bad_spec_and_ids():
    ds = recordwire.Dataset(str(TESTDATA / "ref" / "small.tfrecord"))
    with pytest.raises(recordwire.Error) as info:
        recordwire.Spec.from_json('{"features": {"x": {"form": "nope"}}}')
    assert info.value.kind == "invalid_spec"
    with pytest.raises(TypeError):
        ds.decode([0], 42)
    spec = '{"features": {"label": {"form": "fixed_len", "dtype": "int64", "shape": []}}}'
    with pytest.raises(IndexError):
        ds.decode([0, len(ds)], spec)
