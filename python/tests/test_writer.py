"""Writer: atomic, and byte-exact with TensorFlow's writer (files in
testdata/ref/ were written by TensorFlow: rewriting each record from the dict
`ds[i]` gives the same file)."""

import gzip
import zlib

import numpy as np
import pytest

import recordwire
from conftest import TESTDATA

REF = TESTDATA / "ref"


import json


def not_a_dict(record_json, payload):
    """Whether a record (protobuf's MessageToDict) says more than a dict of
    features can: an Example without its `features` field (a dict always
    has one), or an empty `bytes_list` (an empty Python list is a feature of
    no kind; a typed empty list needs a numpy array of that dtype)."""
    if payload == "ofrecord":  # its map is the record: no presence to lose
        features = record_json.get("feature", {})
    elif "features" not in record_json:
        return True
    else:
        features = record_json["features"].get("feature", {})
    return any("bytes_list" in f and not f["bytes_list"].get("value") for f in features.values())


@pytest.mark.parametrize(
    "name,jsonl,framing,payload",
    [
        ("small.tfrecord", "small.jsonl", "tfrecord", "example"),
        ("examples.tfrecord", "examples.jsonl", "tfrecord", "example"),
        ("ofrecord.part-0", "ofrecord.jsonl", "ofrecord", "ofrecord"),
    ],
)
def test_rewriting_tensorflow_records_from_dicts_is_byte_exact(tmp_path, name, jsonl, framing, payload):
    src = recordwire.Dataset(str(REF / name))
    records = [json.loads(line) for line in (REF / jsonl).read_text().split("\n") if line]
    assert len(records) == len(src)
    differ = set()
    for i in range(len(src)):
        out = tmp_path / f"{i}.rec"
        with recordwire.Writer(out, framing=framing, payload=payload) as w:
            w.write(src[i])
        if bytes(recordwire.Dataset(str(out), payload=payload).raw(0)) != bytes(src.raw(i)):
            differ.add(i)
    assert differ == {i for i, r in enumerate(records) if not_a_dict(r, payload)}
    # The typical file, whole: the same bytes, frames and CRCs included.
    if not differ:
        out = tmp_path / name
        with recordwire.Writer(str(out), framing=framing, payload=payload) as w:
            for i in range(len(src)):
                w.write(src[i])
            assert w.records == len(src)
        assert out.read_bytes() == (REF / name).read_bytes()


def test_payload_bytes_and_compression(tmp_path):
    src = recordwire.Dataset(str(REF / "examples.tfrecord"))
    plain = (REF / "examples.tfrecord").read_bytes()
    for compression, unpack in (("gzip", gzip.decompress), ("zlib", zlib.decompress)):
        out = tmp_path / f"x.{compression}"
        with recordwire.Writer(out, compression=compression) as w:
            for i in range(len(src)):
                w.write(src.raw(i))
        assert unpack(out.read_bytes()) == plain
        back = recordwire.Dataset(str(out))
        assert [bytes(back.raw(i)) for i in range(len(back))] == [bytes(src.raw(i)) for i in range(len(src))]


def test_values_of_every_python_kind(tmp_path):
    out = tmp_path / "kinds.tfrecord"
    with recordwire.Writer(out) as w:
        w.write({
            "i": 7,
            "f": 0.5,
            "s": "héllo",
            "b": b"\x00\xff",
            "ints": [1, -2, 3],
            "floats": [1, 2.5],
            "strs": ["a", b"b"],
            "a64": np.arange(6, dtype=np.int64).reshape(2, 3),
            "a32": np.array([1, 2], dtype=np.int32),
            "f64": np.array([0.25], dtype=np.float64),
            "empty": np.array([], dtype=np.float32),
            "none": None,
        })
    ds = recordwire.Dataset(str(out))
    r = ds[0]
    assert r["i"].tolist() == [7] and r["i"].dtype == np.int64
    assert r["f"].tolist() == [0.5] and r["f"].dtype == np.float32
    assert [bytes(v) for v in r["s"]] == ["héllo".encode()]
    assert [bytes(v) for v in r["b"]] == [b"\x00\xff"]
    assert r["ints"].tolist() == [1, -2, 3]
    assert r["floats"].tolist() == [1.0, 2.5]
    assert [bytes(v) for v in r["strs"]] == [b"a", b"b"]
    assert r["a64"].tolist() == list(range(6))
    assert r["a32"].dtype == np.int64 and r["a32"].tolist() == [1, 2]
    assert r["f64"].dtype == np.float32
    assert r["empty"].dtype == np.float32 and len(r["empty"]) == 0
    assert len(r["none"]) == 0


def test_atomic_on_error_and_bad_values(tmp_path):
    out = tmp_path / "a.tfrecord"
    out.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with recordwire.Writer(out) as w:
            w.write({"x": 1})
            raise RuntimeError("boom")
    assert out.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.tfrecord"]
    w = recordwire.Writer(out)
    with pytest.raises(TypeError, match="feature bad"):
        w.write({"bad": object()})
    with pytest.raises(TypeError):
        w.write({"mixed": [b"a", 1]})
    with pytest.raises(TypeError):
        w.write(42)
    w.close()
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.write({"x": 1})
    assert len(recordwire.Dataset(str(out))) == 0
    with pytest.raises(ValueError, match="framing"):
        recordwire.Writer(tmp_path / "b", framing="nope")
    with pytest.raises(ValueError):
        recordwire.Writer(tmp_path / "b", framing="ofrecord", payload="example")
    with pytest.raises(recordwire.Error) as info:
        recordwire.Writer(tmp_path / "no" / "such" / "dir")
    assert info.value.kind == "io_error"


@pytest.mark.parametrize(
    "name,framing,payload,compression",
    [
        ("w.tfrecord", "tfrecord", "example", "none"),
        ("w.tfrecord.gz", "tfrecord", "example", "gzip"),
        ("w.tfrecords.zlib", "tfrecord", "example", "zlib"),
        ("w.ofrecord", "ofrecord", "ofrecord", "none"),
        ("part-00003", "ofrecord", "ofrecord", "none"),
        ("w.ofrecord.GZ", "ofrecord", "ofrecord", "gzip"),
        ("w.bin", "tfrecord", "example", "none"),
    ],
)
def test_framing_payload_and_compression_come_from_the_name(tmp_path, name, framing, payload, compression):
    out = tmp_path / name
    with recordwire.Writer(out) as w:
        assert (w.framing, w.payload, w.compression) == (framing, payload, compression)
        w.write({"x": [1, 2, 3]})
    head = out.read_bytes()[:2]
    assert (head == b"\x1f\x8b") == (compression == "gzip")
    assert (head[:1] == b"\x78") == (compression == "zlib")
    # Read back with everything detected: the same record.
    ds = recordwire.Dataset(str(out))
    assert (ds.compression[0], ds.payload) == (compression, payload)
    assert ds[0]["x"].tolist() == [1, 2, 3]
    # `pack` names the same file the same way: byte for byte.
    from test_orders import cli
    import subprocess

    packed = tmp_path / "packed" / name
    packed.parent.mkdir()
    src = tmp_path / "in.jsonl"
    body = '{"feature": {"x": {"int64_list": {"value": ["1", "2", "3"]}}}}' if payload == "ofrecord" else '{"features": {"feature": {"x": {"int64_list": {"value": ["1", "2", "3"]}}}}}'
    src.write_text(body + "\n")
    subprocess.run([cli(), "pack", str(src), str(packed)], check=True, capture_output=True)
    if compression == "none":
        assert packed.read_bytes() == out.read_bytes()
    else:
        unpack = gzip.decompress if compression == "gzip" else zlib.decompress
        assert unpack(packed.read_bytes()) == unpack(out.read_bytes())


def test_explicit_arguments_win_and_a_contradiction_is_the_clis_error(tmp_path):
    out = tmp_path / "w.tfrecord.gz"
    with recordwire.Writer(out, compression="none") as w:
        w.write({"x": 1})
    assert out.read_bytes()[:2] != b"\x1f\x8b"
    with recordwire.Writer(tmp_path / "w.ofrecord", framing="tfrecord", payload="example") as w:
        assert (w.framing, w.payload) == ("tfrecord", "example")
    with pytest.raises(ValueError) as info:
        recordwire.Writer(tmp_path / "x.ofrecord", payload="example")
    message = str(info.value)
    assert "the name says ofrecord framing, but example payloads belong in tfrecord frames" in message
    assert "framing='ofrecord'" in message
    # The CLI's words for the same contradiction.
    from test_orders import cli
    import subprocess

    src = tmp_path / "in.jsonl"
    src.write_text("{}\n")
    run = subprocess.run([cli(), "pack", "--payload", "example", str(src), str(tmp_path / "x.ofrecord")], capture_output=True, text=True)
    assert run.returncode != 0
    assert message.replace("framing='ofrecord'", "--framing ofrecord") in run.stderr
    assert not (tmp_path / "x.ofrecord").exists()


def test_a_writer_dropped_unclosed_warns_and_writes_nothing(tmp_path):
    import gc

    out = tmp_path / "lost.tfrecord"
    w = recordwire.Writer(out)
    for i in range(3):
        w.write({"i": i})
    with pytest.warns(ResourceWarning, match=r"lost\.tfrecord.*3 records were not written"):
        del w
        gc.collect()
    assert list(tmp_path.iterdir()) == []
    # Closed, aborted or used in a with block: no warning.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        w = recordwire.Writer(out)
        w.close()
        del w
        a = recordwire.Writer(tmp_path / "aborted.tfrecord")
        a.write({"i": 1})
        a.abort()
        del a
        with recordwire.Writer(tmp_path / "with.tfrecord") as w:
            w.write({"i": 1})
        del w
        gc.collect()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lost.tfrecord", "with.tfrecord"]


def test_numpy_scalars_are_the_one_value_arrays_they_came_from(tmp_path):
    values = {
        "f32": np.float32(1.5),
        "f64": np.float64(2.5),
        "i8": np.int8(-3),
        "i64": np.int64(2**40),
        "flag": np.bool_(True),
        "name": np.bytes_(b"abc"),
    }
    path = tmp_path / "scalars.tfrecord"
    with recordwire.Writer(path) as w:
        w.write(values)
    got = recordwire.Dataset(str(path))[0]
    assert got["f32"].dtype == np.float32 and got["f32"].tolist() == [1.5]
    assert got["f64"].dtype == np.float32 and got["f64"].tolist() == [2.5]
    assert got["i8"].dtype == np.int64 and got["i8"].tolist() == [-3]
    assert got["i64"].tolist() == [2**40]
    assert got["flag"].tolist() == [1]
    assert list(got["name"]) == [b"abc"]
    with pytest.raises(TypeError, match="numpy array or scalar.*not object"):
        with recordwire.Writer(tmp_path / "bad.tfrecord") as w:
            w.write({"x": object()})
