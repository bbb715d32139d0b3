"""Dataset against the reference files of testdata/ref/, whose .jsonl files
hold protobuf's MessageToDict of each record (what tf.train.Example parsing
gives)."""

import base64
import json
import struct

import numpy as np
import pytest

import recordwire
from conftest import TESTDATA, same_dict

REF = TESTDATA / "ref"


def expected_value(kind, lst):
    values = lst.get("value", [])
    if kind == "bytes_list":
        return [base64.b64decode(v) for v in values]
    if kind == "int64_list":
        return np.array([int(v) for v in values], dtype=np.int64)
    if kind == "int32_list":
        return np.array([int(v) for v in values], dtype=np.int32)
    if kind == "float_list":
        return np.array([float(v) for v in values], dtype=np.float32)
    if kind == "double_list":
        return np.array([float(v) for v in values], dtype=np.float64)
    raise AssertionError(kind)


def check_features(got, features, where):
    features = features or {}
    assert sorted(got) == sorted(features), where
    for name, feature in features.items():
        if not feature:
            assert len(got[name]) == 0, (where, name)
            continue
        ((kind, lst),) = feature.items()
        want = expected_value(kind, lst)
        value = got[name]
        if kind == "bytes_list":
            assert value == want, (where, name)
        else:
            assert isinstance(value, np.ndarray), (where, name)
            assert value.dtype == want.dtype, (where, name)
            # Bit for bit (NaN, -0.0 included).
            assert value.tobytes() == want.tobytes(), (where, name)


def jsonl(name):
    with open(REF / name) as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize(
    "data,ref",
    [
        ("examples.tfrecord", "examples.jsonl"),
        ("examples.tfrecord.gz", "examples.jsonl"),
        ("examples.tfrecord.zlib", "examples.jsonl"),
        ("small.tfrecord", "small.jsonl"),
    ],
)
def test_examples_equal_protobuf(data, ref):
    ds = recordwire.Dataset(str(REF / data))
    want = jsonl(ref)
    assert len(ds) == len(want)
    assert ds.payload == "example"
    for i, record in enumerate(want):
        check_features(ds[i], record.get("features", {}).get("feature"), (data, i))


def test_ofrecord_equal_protobuf():
    ds = recordwire.Dataset(str(REF / "ofrecord.part-0"))
    want = jsonl("ofrecord.jsonl")
    assert ds.payload == "ofrecord"
    assert len(ds) == len(want)
    for i, record in enumerate(want):
        check_features(ds[i], record.get("feature"), i)


def check_value(value, feature, where):
    """One feature's value (``ds[i]``'s form) against its MessageToDict."""
    if not feature:
        assert len(value) == 0, where
        return
    ((kind, lst),) = feature.items()
    want = expected_value(kind, lst)
    if kind == "bytes_list":
        assert value == want, where
    else:
        assert isinstance(value, np.ndarray), where
        assert value.dtype == want.dtype, where
        assert value.tobytes() == want.tobytes(), where


def test_sequence_example_gives_context_and_feature_lists():
    ds = recordwire.Dataset(str(REF / "sequence_examples.tfrecord"))
    want = jsonl("sequence_examples.jsonl")
    assert ds.payload == "sequence_example"
    assert len(ds) == len(want)
    frames_seen = 0
    for i, record in enumerate(want):
        got = ds[i]
        # The feature lists sit under "sequence", always there (maybe empty),
        # beside the context features, which are given as an Example's are.
        sequence = got.pop("sequence")
        check_features(got, record.get("context", {}).get("feature"), i)
        lists = record.get("feature_lists", {}).get("feature_list", {})
        assert sorted(sequence) == sorted(lists), i
        for name, lst in lists.items():
            frames = lst.get("feature", [])
            assert isinstance(sequence[name], list), (i, name)
            assert len(sequence[name]) == len(frames), (i, name)
            for t, frame in enumerate(frames):
                check_value(sequence[name][t], frame, (i, name, t))
                frames_seen += 1
    # The file has feature lists with frames of every kind (not a vacuous pass).
    assert frames_seen > 10


def test_sequence_example_bytes_frames_are_views_into_the_file():
    ds = recordwire.Dataset(str(REF / "sequence_examples.tfrecord"))
    frames = ds[3]["sequence"]["frames"]
    assert [bytes(v) for v in frames[0]] == [b"\x89PNG\r\n\x1a\n"]
    assert all(isinstance(v, memoryview) and v.readonly for frame in frames for v in frame)


def test_raw_is_the_payload():
    path = REF / "small.tfrecord"
    ds = recordwire.Dataset(str(path))
    data = path.read_bytes()
    # Walk the frames by hand: u64 length, u32 CRC, data, u32 CRC.
    pos, i = 0, 0
    while pos < len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        assert bytes(ds.raw(i)) == data[pos + 12 : pos + 12 + n]
        pos += 16 + n
        i += 1
    assert i == len(ds)
    assert ds.raw(-1) == ds.raw(len(ds) - 1)


def test_indexing():
    ds = recordwire.Dataset(str(REF / "small.tfrecord"))
    n = len(ds)
    assert ds[-1]["label"].tolist() == ds[n - 1]["label"].tolist()
    assert ds[-n]["label"].tolist() == ds[0]["label"].tolist()
    for bad in (n, n + 5, -n - 1):
        with pytest.raises(IndexError):
            ds[bad]
        with pytest.raises(IndexError):
            ds.raw(bad)
    # Iteration through the sequence protocol stops at IndexError.
    assert [r["label"][0] for r in ds] == [3, 0, 7, 4, 1, 8, 5, 2, 9, 6]


def test_paths_list_and_glob(tmp_path):
    one = recordwire.Dataset(str(REF / "small.tfrecord"))
    two = recordwire.Dataset([str(REF / "small.tfrecord"), REF / "small.tfrecord"])
    assert len(two) == 2 * len(one)
    assert two[len(one)]["label"].tolist() == one[0]["label"].tolist()
    (tmp_path / "a-1.tfrecord").write_bytes((REF / "small.tfrecord").read_bytes())
    (tmp_path / "a-2.tfrecord").write_bytes((REF / "small.tfrecord").read_bytes())
    (tmp_path / "b.tfrecord").write_bytes(b"")
    globbed = recordwire.Dataset(str(tmp_path / "a-*.tfrecord"))
    assert len(globbed) == 2 * len(one)
    assert globbed.files == [str(tmp_path / "a-1.tfrecord"), str(tmp_path / "a-2.tfrecord")]
    # As on the command line: a usage_error, not a ValueError (issue 37, point 14).
    with pytest.raises(recordwire.Error, match="no file matches") as e:
        recordwire.Dataset(str(tmp_path / "zzz-*"))
    assert e.value.kind == "usage_error"


def test_empty_file():
    ds = recordwire.Dataset(str(REF / "empty.tfrecord"))
    assert len(ds) == 0
    with pytest.raises(IndexError):
        ds[0]


def test_options_are_checked():
    with pytest.raises(ValueError):
        recordwire.Dataset(str(REF / "small.tfrecord"), framing="zip")
    ds = recordwire.Dataset(str(REF / "small.tfrecord"), framing="tfrecord", payload="raw")
    with pytest.raises(ValueError):
        ds[0]
    assert len(ds.raw(0)) > 0


def test_a_spec_pickles_as_its_json():
    import pickle

    spec = recordwire.infer_spec(str(REF / "small.tfrecord"))
    clone = pickle.loads(pickle.dumps(spec))
    assert type(clone) is recordwire.Spec
    assert clone.to_json() == spec.to_json() and clone.features == spec.features


def test_pickles_with_its_keyword_options():
    import pickle

    ds = recordwire.Dataset([str(REF / "small.tfrecord")], payload="raw", verify_crc=False)
    clone = pickle.loads(pickle.dumps(ds))
    assert type(clone) is recordwire.Dataset
    assert clone.payload == "raw" and len(clone) == len(ds)
    assert bytes(clone.raw(3)) == bytes(ds.raw(3))


def test_repr_counts_in_english(tmp_path):
    one = recordwire.Dataset(str(TESTDATA / "ref" / "small.tfrecord"))
    assert repr(one) == "recordwire.Dataset(10 records in 1 file, payload example)"
    from conftest import write_tfrecord

    single = write_tfrecord(tmp_path / "one.tfrecord", [b""])
    two = recordwire.Dataset([str(single), str(single)], payload="raw")
    assert repr(two) == "recordwire.Dataset(2 records in 2 files, payload raw)"


def test_slices_give_lists_of_records():
    ds = recordwire.Dataset(str(TESTDATA / "ref" / "examples.tfrecord"))
    n = len(ds)

    for s in [slice(0, 3), slice(None, None, -1), slice(5, 30, 7), slice(-3, None), slice(10, 2), slice(None)]:
        got = ds[s]
        assert isinstance(got, list)
        want = [ds[i] for i in range(n)[s]]
        assert len(got) == len(want), s
        for a, b in zip(got, want):
            same_dict(a, b)
    with pytest.raises(TypeError, match="an int or a slice"):
        ds["3"]
    with pytest.raises(IndexError):
        ds[n]
