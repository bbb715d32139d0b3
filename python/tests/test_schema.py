"""Any protobuf message read by a schema given at run time (issue 38, point 5):
``recordwire.Schema`` and ``Dataset(message=...)``, against protobuf itself.

The oracle is protobuf's Python package (upb), with message classes built at
run time from the same descriptor sets (testdata/schema/*.pb; versions in
testdata/schema/README.md): for every record of the fixtures, ``ds.json(i)``
must equal ``json_format.MessageToDict`` value for value, and ``ds[i]`` must
hold the values of the parsed message's set fields in their Python forms.
"""

from __future__ import annotations

import datetime
import json
import math
import pickle
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

import recordwire

pytest.importorskip("google.protobuf", reason="the oracle is protobuf's Python package")
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "testdata" / "schema"
FIXTURES: List[Tuple[str, str]] = [
    ("shapes", "rwtest.Shapes"),
    ("legacy", "rwtest.Legacy"),
    ("wkt", "rwtest.Wkt"),
]


def oracle_class(name: str, message: str) -> Any:
    pool = descriptor_pool.DescriptorPool()
    fds = descriptor_pb2.FileDescriptorSet.FromString((SCHEMA / f"{name}.pb").read_bytes())
    for f in fds.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(message)), pool


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers by value, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def python_form(msg: Any, f: Any, value: Any) -> Any:
    """A field's value of a upb message in the form ``ds[i]`` gives it."""
    from google.protobuf.descriptor import FieldDescriptor as FD

    def one(v: Any) -> Any:
        if f.type == FD.TYPE_ENUM:
            named = f.enum_type.values_by_number.get(v)
            return named.name if named is not None else v
        if f.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
            full = f.message_type.full_name
            if full == "google.protobuf.Timestamp":
                return v.ToDatetime(tzinfo=datetime.timezone.utc)
            if full == "google.protobuf.Duration":
                return v.ToTimedelta()
            return fields_of(v)
        return v

    if f.message_type is not None and f.message_type.GetOptions().map_entry:
        vf = f.message_type.fields_by_name["value"]
        out = {}
        for k in value:
            v = value[k]
            out[k] = python_form(msg, vf, v) if vf.message_type is None else one_map_value(vf, v)
        return out
    if f.is_repeated:
        return [one(v) for v in value]
    return one(value)


def one_map_value(vf: Any, v: Any) -> Any:
    full = vf.message_type.full_name
    if full == "google.protobuf.Timestamp":
        return v.ToDatetime(tzinfo=datetime.timezone.utc)
    if full == "google.protobuf.Duration":
        return v.ToTimedelta()
    return fields_of(v)


def fields_of(msg: Any) -> Dict[str, Any]:
    return {f.name: python_form(msg, f, v) for f, v in msg.ListFields()}


def equal_forms(ours: Any, theirs: Any, where: str) -> None:
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), where
        assert sorted(map(str, ours)) == sorted(map(str, theirs)), where
        for k in theirs:
            equal_forms(ours[k], theirs[k], f"{where}.{k}")
    elif isinstance(theirs, list):
        if isinstance(ours, np.ndarray):
            mine = ours.tolist()
            if ours.dtype == np.float32:
                theirs = np.asarray(theirs, dtype=np.float32).tolist()
            assert len(mine) == len(theirs), where
            for n, (a, b) in enumerate(zip(mine, theirs)):
                assert a == b or (a != a and b != b), f"{where}[{n}]: {a!r} != {b!r}"
        else:
            assert isinstance(ours, list) and len(ours) == len(theirs), where
            for n, (a, b) in enumerate(zip(ours, theirs)):
                equal_forms(a, b, f"{where}[{n}]")
    elif isinstance(theirs, bytes):
        assert isinstance(ours, memoryview), f"{where}: {type(ours)}"
        assert ours.tobytes() == theirs, where
    elif isinstance(theirs, float):
        assert isinstance(ours, float), where
        assert ours == theirs or (ours != ours and theirs != theirs), f"{where}: {ours!r} != {theirs!r}"
    else:
        assert type(ours) is type(theirs), f"{where}: {type(ours)} is not {type(theirs)}"
        assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"


def expected(name: str) -> List[Dict[str, Any]]:
    text = (SCHEMA / f"{name}.expected.jsonl").read_text()
    return [json.loads(line) for line in text.split("\n") if line]


@pytest.mark.parametrize("name,message", FIXTURES)
def test_json_equals_message_to_dict(name: str, message: str) -> None:
    schema = recordwire.Schema.from_descriptor_set(SCHEMA / f"{name}.pb", message)
    assert schema.message_name == message
    ds = recordwire.Dataset(SCHEMA / f"{name}.tfrecord", message=schema)
    want = expected(name)
    assert len(ds) == len(want)
    for i, line in enumerate(want):
        assert same(json.loads(ds.json(i)), line["dict"]), f"{name} record {i}"
        assert same(json.loads(ds.json(i, print_defaults=True)), line["dict_all"]), f"{name} record {i}"
        # The same through the schema alone, on the record's bytes.
        assert schema.json(bytes(ds.raw(i))) == ds.json(i)


@pytest.mark.parametrize("name,message", FIXTURES)
def test_getitem_holds_the_parsed_values(name: str, message: str) -> None:
    cls, _ = oracle_class(name, message)
    ds = recordwire.Dataset(
        SCHEMA / f"{name}.tfrecord",
        message=recordwire.Schema.from_descriptor_set((SCHEMA / f"{name}.pb").read_bytes(), message),
    )
    for i in range(len(ds)):
        msg = cls.FromString(bytes(ds.raw(i)))
        try:
            theirs = fields_of(msg)
        except ValueError:
            # A Timestamp outside what datetime holds: ours must raise too.
            with pytest.raises(ValueError):
                ds[i]
            continue
        equal_forms(ds[i], theirs, f"{name}[{i}]")


def test_bytes_are_views_of_the_file_and_ints_are_exact() -> None:
    ds = recordwire.Dataset(
        SCHEMA / "shapes.tfrecord",
        message=recordwire.Schema.from_descriptor_set(SCHEMA / "shapes.pb", "rwtest.Shapes"),
    )
    found_bytes = found_big = False
    for i in range(len(ds)):
        rec = ds[i]
        if rec.get("f_bytes"):
            assert isinstance(rec["f_bytes"], memoryview) and rec["f_bytes"].readonly
            found_bytes = True
        if isinstance(rec.get("f_uint64"), int) and rec["f_uint64"] > 2**53:
            found_big = True
    assert found_bytes and found_big


def test_schema_from_proto_and_from_class_agree(tmp_path: Path) -> None:
    by_proto = recordwire.Schema.from_proto(SCHEMA / "shapes.proto", "rwtest.Shapes", include=[SCHEMA])
    cls, pool = oracle_class("shapes", "rwtest.Shapes")
    by_class = recordwire.Schema.from_class(cls)
    by_descriptor = recordwire.Schema.from_class(cls.DESCRIPTOR)
    by_pool = recordwire.Schema.from_class(pool, "rwtest.Shapes")
    data = (SCHEMA / "shapes.tfrecord")
    texts = []
    for schema in (by_proto, by_class, by_descriptor, by_pool):
        ds = recordwire.Dataset(data, message=schema)
        texts.append([ds.json(i) for i in range(len(ds))])
    assert texts[0] == texts[1] == texts[2] == texts[3]
    # A schema and a dataset with one pickle as what they are.
    again = pickle.loads(pickle.dumps(by_class))
    assert again.message_name == "rwtest.Shapes"
    ds = pickle.loads(pickle.dumps(recordwire.Dataset(data, message=by_class)))
    assert ds.message is not None and [ds.json(i) for i in range(len(ds))] == texts[0]


def test_schema_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.proto"
    bad.write_text('syntax = "proto3";\nmessage M {\n  int32 x = ;\n}\n')
    with pytest.raises(recordwire.Error, match=r"bad\.proto:3:\d+"):
        recordwire.Schema.from_proto(bad, "M")
    with pytest.raises(recordwire.Error, match="no message rwtest.Nope"):
        recordwire.Schema.from_descriptor_set(SCHEMA / "shapes.pb", "rwtest.Nope")
    with pytest.raises(recordwire.Error, match="not a FileDescriptorSet"):
        recordwire.Schema.from_descriptor_set(b"\xff\xff", "M")
    with pytest.raises(TypeError):
        recordwire.Schema.from_class(42)
    plain = recordwire.Dataset(SCHEMA / "shapes.tfrecord", payload="raw")
    with pytest.raises(ValueError, match="message"):
        plain.json(0)
    schema = recordwire.Schema.from_descriptor_set(SCHEMA / "shapes.pb", "rwtest.Shapes")
    with pytest.raises(ValueError, match="payload"):
        recordwire.Dataset(SCHEMA / "shapes.tfrecord", message=schema, payload="example")


def test_a_damaged_record_is_a_decode_error_with_its_place(tmp_path: Path) -> None:
    # A proto3 string that is not UTF-8, framed as a TFRecord.
    schema = recordwire.Schema.from_descriptor_set(SCHEMA / "shapes.pb", "rwtest.Shapes")
    with recordwire.Writer(tmp_path / "bad.tfrecord", payload="raw") as w:
        w.write(b"\x18\x01")  # f_int32 = 1
        w.write(b"\x72\x01\xff")  # f_string = b"\xff"
    ds = recordwire.Dataset(tmp_path / "bad.tfrecord", message=schema)
    assert ds[0] == {"f_int32": 1}
    with pytest.raises(recordwire.Error) as e:
        ds[1]
    assert e.value.kind == "decode_error" and e.value.record == 1
    with pytest.raises(recordwire.Error) as e:
        ds.json(1)
    assert e.value.kind == "decode_error" and e.value.offset is not None


def test_decode_by_field_paths() -> None:
    pa = pytest.importorskip("pyarrow", reason="decode by paths gives Arrow columns")
    from recordwire import _native

    set_bytes = (SCHEMA / "shapes.pb").read_bytes()
    ds = recordwire.Dataset(
        SCHEMA / "shapes.tfrecord", message=recordwire.Schema.from_descriptor_set(set_bytes, "rwtest.Shapes")
    )
    ids = [3, 0, len(ds) - 1, 7]
    paths = ["f_int64", "r_int32", "inner.a", "m_str_int", "color", ""]
    got = ds.decode(ids, paths, to="arrow")
    # The same columns as the crate's mapping gives for the file (the native
    # function the column tests check against protobuf's parse).
    want = pa.record_batch(_native.schema_columns(set_bytes, "rwtest.Shapes", str(SCHEMA / "shapes.tfrecord"), ids, paths))
    assert got.equals(want)
    names = ds.decode(ids, ["color"], to="arrow", enum_names=True).column(0)
    assert pa.types.is_large_string(names.type) or pa.types.is_string(names.type)
    # numpy: numbers as arrays, ragged lists as Ragged of the same values.
    n = ds.decode(ids, ["f_int64", "r_int32", "m_str_int"])
    assert isinstance(n["f_int64"], np.ndarray) and n["f_int64"].tolist() == got.column(0).to_pylist()
    rag = n["r_int32"]
    rows = got.column(1).to_pylist()
    if isinstance(rag, np.ndarray):
        assert rag.tolist() == rows
    else:
        assert [rag.values[rag.row_splits[r] : rag.row_splits[r + 1]].tolist() for r in range(len(ids))] == rows
    assert isinstance(n["m_str_int"], (pa.Array, pa.ChunkedArray))
    with pytest.raises(recordwire.Error, match="inner.nope"):
        ds.decode([0], ["inner.nope"])
    plain = recordwire.Dataset(SCHEMA / "shapes.tfrecord", payload="raw")
    with pytest.raises(ValueError, match="message"):
        plain.decode([0], ["f_int64"], to="arrow")


def test_waymo_scenario_paths_equal_upb_projection(tmp_path: Path) -> None:
    """The issue's three paths of the real Waymo Scenario file, against upb's
    parse and projection of the same record (Waymo's protos compiled by
    grpc_tools.protoc)."""
    from conftest import realworld_dir

    pytest.importorskip("pyarrow", reason="decode by paths gives Arrow columns")
    grpc_tools = pytest.importorskip("grpc_tools", reason="protoc compiles Waymo's protos for the oracle")
    del grpc_tools
    f = realworld_dir() / (
        "waymo-research_waymo-open-dataset__src__waymo_open_dataset__utils__testdata__"
        "motion_data_one_scenario.tfrecord"
    )
    if not f.exists():
        from conftest import real_files

        assert real_files() is None, f"{f} is missing from the real files"
        return
    import subprocess
    import sys

    waymo = ROOT / "testdata" / "schema" / "waymo"
    pb = tmp_path / "waymo.pb"
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{waymo}", "--include_imports",
         f"--descriptor_set_out={pb}", "waymo_open_dataset/protos/scenario.proto"],
        check=True,
    )
    schema = recordwire.Schema.from_proto(
        waymo / "waymo_open_dataset" / "protos" / "scenario.proto", "waymo.open_dataset.Scenario", include=[waymo]
    )
    ds = recordwire.Dataset(f, message=schema)
    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(pb.read_bytes()).file:
        pool.Add(fd)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("waymo.open_dataset.Scenario"))
    msg = cls.FromString(bytes(ds.raw(0)))
    batch = ds.decode([0], ["tracks.states.center_x", "scenario_id", "map_features.lane.polyline"], to="arrow")
    # proto2 `optional` fields: absent is null in the columns.
    def opt(m: Any, name: str) -> Any:
        return getattr(m, name) if m.HasField(name) else None

    assert batch.column(0).to_pylist() == [[[opt(s, "center_x") for s in t.states] for t in msg.tracks]]
    assert batch.column(1).to_pylist() == [msg.scenario_id]
    lanes = [
        [{"x": opt(p, "x"), "y": opt(p, "y"), "z": opt(p, "z")} for p in m.lane.polyline]
        if m.HasField("lane")
        else None
        for m in msg.map_features
    ]
    assert batch.column(2).to_pylist() == [lanes]
    # And the record as JSON is MessageToDict's, value for value.
    assert same(
        json.loads(ds.json(0)),
        json_format.MessageToDict(msg, preserving_proto_field_name=True),
    )


def test_loader_reads_columns_by_field_path() -> None:
    pytest.importorskip("pyarrow", reason="decode by paths gives Arrow columns")
    schema = recordwire.Schema.from_descriptor_set(SCHEMA / "shapes.pb", "rwtest.Shapes")
    ds = recordwire.Dataset(SCHEMA / "shapes.tfrecord", message=schema)
    want = ds.decode(list(range(len(ds))), ["f_int64", "r_int32"], to="arrow")
    loader = recordwire.Loader(ds, batch_size=7, columns=["f_int64", "r_int32"], seed=5, threads=2)
    assert len(loader) == -(-len(ds) // 7)
    seen: Dict[int, Any] = {}
    batches = list(loader)
    assert len(batches) == len(loader)
    for b in batches:
        assert isinstance(b["f_int64"], np.ndarray)
        for row, i in enumerate(b.ids.tolist()):
            seen[i] = b["f_int64"][row]
    assert sorted(seen) == list(range(len(ds)))
    assert all(seen[i] == want.column(0)[i].as_py() for i in seen)
    # The next epoch is shuffled anew; a state resumes at its batch.
    first = [b.ids.tolist() for b in loader]
    assert sorted(sum(first, [])) == list(range(len(ds)))
    again = recordwire.Loader(ds, batch_size=7, columns=["f_int64"], seed=5, to="arrow")
    it = iter(again)
    next(it)
    state = again.state_dict()
    second = next(it)
    resumed = recordwire.Loader(ds, batch_size=7, columns=["f_int64"], seed=5, to="arrow")
    resumed.load_state_dict(state)
    assert next(iter(resumed)).equals(second)
    with pytest.raises(ValueError, match="message"):
        recordwire.Loader(recordwire.Dataset(SCHEMA / "shapes.tfrecord", payload="raw"), columns=["f_int64"])
    with pytest.raises(recordwire.Error, match="nope"):
        recordwire.Loader(ds, columns=["nope"])


def test_builtin_event_schema_reads_a_real_event_file() -> None:
    from conftest import realworld_dir
    from test_arrow import recordwire_bin

    f = realworld_dir() / "tensorflow_lingvo__lingvo__core__ops__testdata__events.out.tfevents.test"
    if not f.exists():
        from conftest import real_files

        assert real_files() is None, f"{f} is missing from the real files"
        return
    import subprocess

    schema = recordwire.Schema.builtin("tensorflow.Event")
    assert schema.message_name == "tensorflow.Event"
    ds = recordwire.Dataset(f, message=schema)
    # The CLI's lines (checked against MessageToDict by test_builtin_schemas).
    lines = subprocess.run(
        [str(recordwire_bin()), "cat", "--message", "tensorflow.Event", str(f)],
        check=True, capture_output=True, text=True,
    ).stdout.split("\n")[:-1]
    assert len(ds) == len(lines) == 361
    assert [ds.json(i) for i in range(len(ds))] == lines
    steps = [ds[i].get("step", 0) for i in range(len(ds))]
    assert all(type(s) is int for s in steps) and max(steps) > 0
    with pytest.raises(recordwire.Error, match="tensorflow.Event"):
        recordwire.Schema.builtin("tensorflow.NoSuchThing")
