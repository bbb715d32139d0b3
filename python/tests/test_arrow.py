"""One Arrow mapping: ``recordwire export`` (Parquet, read back with pyarrow)
and ``Dataset.decode(to="arrow")`` give the same schema and values for every
column form (both use the crate's ``recordwire::arrow``)."""

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest

import recordwire
from conftest import ROOT


def recordwire_bin() -> Path:
    """The CLI that ``cargo test`` (run before pytest by ./test.sh) built."""
    candidates = [os.environ.get("RECORDWIRE_BIN")]
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    candidates += [str(target / "debug" / "recordwire"), str(target / "release" / "recordwire")]
    for c in candidates:
        if c and Path(c).is_file():
            return Path(c)
    pytest.skip("no recordwire binary: cargo build (or set RECORDWIRE_BIN)")


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


def ints(xs):
    return {"int64_list": {"value": [str(x) for x in xs]}}


def floats(xs):
    return {"float_list": {"value": list(xs)}}


def blobs(xs):
    return {"bytes_list": {"value": [b64(x) for x in xs]}}


def example(i: int) -> dict:
    words = [bytes([97 + k]) * (k + i) for k in range(i % 3)]
    tags = [f"t{k}.{i}".encode() for k in range(i % 4)]
    f = {
        "label": ints([i - 2]),
        "pos": floats([i + k / 8 for k in range(6)]),
        "image": blobs([f"img-{i}".encode()]),
        "image_ref": blobs([bytes([i]) * i]),
        "tokens": ints(range(i % 4)),
        "words": blobs(words),
        "words_ref": blobs(words),
        "tags": blobs(tags),
        "tags_ref": blobs(tags),
    }
    if i % 3 != 1:
        f["boxes"] = floats([k - i for k in range(2 * (i % 4))])
    return {"features": {"feature": f}}


EXAMPLE_SPEC = {
    "payload": "example",
    "features": {
        "label": {"form": "fixed_len", "dtype": "int64", "shape": []},
        "pos": {"form": "fixed_len", "dtype": "float32", "shape": [2, 3]},
        "image": {"form": "fixed_len", "dtype": "bytes", "shape": []},
        "image_ref": {"form": "fixed_len", "dtype": "bytes", "shape": [], "borrow": True},
        "tokens": {"form": "var_len", "dtype": "int64"},
        "words": {"form": "var_len", "dtype": "bytes", "sparse": True},
        "words_ref": {"form": "var_len", "dtype": "bytes", "borrow": True},
        "boxes": {"form": "fixed_len_sequence", "dtype": "float32", "shape": [2], "allow_missing": True,
                  "default": -1.0},
        "tags": {"form": "fixed_len_sequence", "dtype": "bytes", "shape": [], "allow_missing": True},
        "tags_ref": {"form": "fixed_len_sequence", "dtype": "bytes", "shape": [], "allow_missing": True,
                     "borrow": True},
    },
}


def sequence_example(i: int) -> dict:
    lists = {
        "notes": {"feature": [ints(range(i, i + (f + i) % 3)) for f in range(i % 4)]},
        "words": {"feature": [blobs([f"w{f}".encode()] * ((f + i) % 3)) for f in range(i % 3)]},
        "labels": {"feature": [blobs([f"l{f}".encode()]) for f in range(i % 3)]},
        "id": {"feature": [ints([i, -i])]},
    }
    if i % 4 != 1:
        lists["frames"] = {"feature": [floats([f * 3 + k + i for k in range(3)]) for f in range(i % 5)]}
    context = {"id": ints([1000 + i]), "name": blobs([f"clip-{i}".encode()] * (i % 3))}
    return {"context": {"feature": context}, "feature_lists": {"feature_list": lists}}


SEQUENCE_SPEC = {
    "payload": "sequence_example",
    "features": {
        "id": {"form": "fixed_len", "dtype": "int64", "shape": []},
        "name": {"form": "var_len", "dtype": "bytes"},
    },
    "sequence": {
        "frames": {"form": "fixed_len_sequence", "dtype": "float32", "shape": [3], "allow_missing": True},
        "labels": {"form": "fixed_len_sequence", "dtype": "bytes", "shape": [], "allow_missing": True},
        "notes": {"form": "var_len", "dtype": "int64", "sparse": True},
        "words": {"form": "var_len", "dtype": "bytes", "borrow": True},
        "id": {"form": "var_len", "dtype": "int64"},
    },
}


def ofrecord(i: int) -> dict:
    return {
        "feature": {
            "img": floats([k + i for k in range(4)]),
            "ids": ints(range(i % 5)),
            "chars": blobs([b"abcdefg"[: i % 6]]),
            "bytes": {"int32_list": {"value": [i, 255, 7]}},
            "score": {"double_list": {"value": [i / 4]}},
            "more": {"int32_list": {"value": list(range(i % 3))}},
        }
    }


OFRECORD_SPEC = {
    "payload": "ofrecord",
    "features": {
        "img": {"form": "ofrecord_raw", "dtype": "float32", "shape": [2, 2]},
        "ids": {"form": "ofrecord_raw", "dtype": "int32", "shape": [4], "auto_zero_padding": True},
        "chars": {"form": "ofrecord_raw", "dtype": "int8", "shape": [5], "dim1_varying_length": True},
        "bytes": {"form": "ofrecord_raw", "dtype": "uint8", "shape": [3]},
        "score": {"form": "fixed_len", "dtype": "float64", "shape": []},
        "more": {"form": "var_len", "dtype": "int32"},
    },
}


@pytest.mark.parametrize(
    "payload,record,spec,name",
    [
        ("example", example, EXAMPLE_SPEC, "ex.tfrecord"),
        ("sequence_example", sequence_example, SEQUENCE_SPEC, "seq.tfrecord"),
        ("ofrecord", ofrecord, OFRECORD_SPEC, "of.ofrecord"),
    ],
)
def test_export_and_decode_to_arrow_agree(tmp_path, payload, record, spec, name):
    pa = pytest.importorskip("pyarrow", reason="pyarrow is installed by ./test.sh")
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is installed by ./test.sh")
    exe = recordwire_bin()
    n = 23
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text("".join(json.dumps(record(i)) + "\n" for i in range(n)))
    data = tmp_path / name
    subprocess.run([exe, "pack", "--payload", payload, jsonl, data], check=True, capture_output=True)
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    out = tmp_path / "out.parquet"
    # Batches of 5: the file's rows come from several decodes, the last short.
    done = subprocess.run([exe, "export", "--spec", spec_path, "--batch-size", "5", data, out],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    table = pq.read_table(out)

    ds = recordwire.Dataset(str(data))
    rb = ds.decode(list(range(n)), spec, to="arrow")
    assert isinstance(rb, pa.RecordBatch)
    assert rb.num_rows == n
    # The same schema (Parquet adds only its key-value metadata)...
    assert table.schema.remove_metadata() == rb.schema, f"{table.schema}\n!=\n{rb.schema}"
    names = list(spec["features"]) + [
        f"sequence.{k}" if k in spec["features"] else k for k in spec.get("sequence", {})
    ]
    assert rb.schema.names == names
    # ... and the same values, column by column.
    for field in rb.schema:
        assert table.column(field.name).to_pylist() == rb.column(field.name).to_pylist(), field.name
    assert table.equals(pa.Table.from_batches([rb]))
    # The forms the two used to disagree on, spelled out.
    if payload == "example":
        assert rb.schema.field("boxes").type == pa.large_list(pa.field("item", pa.list_(pa.field("item", pa.float32(), False), 2), False))
        boxes = rb.column("boxes").to_pylist()
        assert boxes[1] == [] and boxes[2] == [[-2.0, -1.0], [0.0, 1.0]]
        assert rb.column("tags_ref").to_pylist()[2] == [b"t0.2", b"t1.2"]
    if payload == "sequence_example":
        assert rb.column("sequence.id").to_pylist()[7] == [[7, -7]]
        assert rb.column("frames").to_pylist()[5] == []
    if payload == "ofrecord":
        assert rb.column("ids").to_pylist()[2] == [0, 1]
        assert rb.column("chars").to_pylist()[3] == [97, 98, 99]
