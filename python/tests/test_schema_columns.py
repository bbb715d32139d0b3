"""Columns by field path (``recordwire._native.schema_columns``) against the
oracle: each record of ``testdata/schema/`` parsed by protobuf itself (classes
built at run time from the fixture's ``.pb``), its values taken by reflection
along the same path (``HasField`` for presence, so that a oneof's losing
member, a closed enum's unknown value, a split message and the other parse
rules are protobuf's), and built into an Arrow array by pyarrow with the type
our column has: the two must hold the same values."""

import math
import pathlib
import struct
from typing import Any, Dict, List, Tuple

import pytest

pa = pytest.importorskip("pyarrow")
descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
from google.protobuf import descriptor_pool, message_factory  # noqa: E402

from recordwire import _native  # noqa: E402

SCHEMA = pathlib.Path(__file__).resolve().parents[2] / "testdata" / "schema"


def load(name: str, message: str) -> Tuple[bytes, Any]:
    """The descriptor set of fixture ``name`` and the class of ``message``."""
    data = (SCHEMA / f"{name}.pb").read_bytes()
    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(data).file:
        pool.Add(f)
    return data, message_factory.GetMessageClass(pool.FindMessageTypeByName(message))


def payloads(path: pathlib.Path) -> List[bytes]:
    """The payloads of a TFRecord file, by its framing (length, CRC, data,
    CRC), without recordwire."""
    data = path.read_bytes()
    out, at = [], 0
    while at < len(data):
        (n,) = struct.unpack_from("<Q", data, at)
        out.append(data[at + 12 : at + 12 + n])
        at += 12 + n + 4
    return out


def is_map(fd: Any) -> bool:
    return fd.message_type is not None and fd.message_type.GetOptions().map_entry


def repeated(fd: Any) -> bool:
    return bool(fd.is_repeated)


def scalar(v: Any, fd: Any, enum_names: bool) -> Any:
    if fd.enum_type is not None and enum_names:
        known = fd.enum_type.values_by_number.get(v)
        return known.name if known is not None else str(v)
    return v


def value(v: Any, fd: Any, stack: List[str], enum_names: bool) -> Any:
    """One value of field ``fd`` (no repetition)."""
    if fd.message_type is not None:
        return whole(v, stack, enum_names)
    return scalar(v, fd, enum_names)


def field(msg: Any, fd: Any, stack: List[str], enum_names: bool) -> Any:
    """Field ``fd`` of ``msg`` taken whole."""
    v = getattr(msg, fd.name)
    if is_map(fd):
        vfd = fd.message_type.fields_by_name["value"]
        kfd = fd.message_type.fields_by_name["key"]
        return [(scalar(k, kfd, enum_names), value(v[k], vfd, stack, enum_names)) for k in v]
    if repeated(fd):
        return [value(x, fd, stack, enum_names) for x in v]
    if fd.has_presence and not msg.HasField(fd.name):
        return None
    return value(v, fd, stack, enum_names)


def whole(msg: Any, stack: List[str], enum_names: bool) -> Any:
    """A message as a struct of all its fields; a type already being built
    around it is its (canonical) bytes."""
    d = msg.DESCRIPTOR
    if d.full_name in stack:
        return msg.SerializeToString(deterministic=True)
    inner = stack + [d.full_name]
    return {f.name: field(msg, f, inner, enum_names) for f in d.fields}


def oracle(msg: Any, steps: List[str], enum_names: bool) -> Any:
    """The value of path ``steps`` in ``msg``."""
    if not steps:
        return whole(msg, [], enum_names)
    fd = msg.DESCRIPTOR.fields_by_name[steps[0]]
    if len(steps) == 1:
        return field(msg, fd, [], enum_names)
    if repeated(fd):
        return [oracle(m, steps[1:], enum_names) for m in getattr(msg, fd.name)]
    if not msg.HasField(fd.name):
        return None
    return oracle(getattr(msg, fd.name), steps[1:], enum_names)


# Our cut bytes are the sub-message as it came on the wire; compared
# after a round trip through protobuf, as the oracle's canonical bytes. Map
# entries are compared by key.


def canon_whole(v: Any, desc: Any, stack: List[str]) -> Any:
    if v is None:
        return None
    if desc.full_name in stack:
        cls = message_factory.GetMessageClass(desc)
        return cls.FromString(v).SerializeToString(deterministic=True)
    inner = stack + [desc.full_name]
    return {f.name: canon_field(v[f.name], f, inner) for f in desc.fields}


def canon_value(x: Any, fd: Any, stack: List[str]) -> Any:
    if fd.message_type is not None:
        return canon_whole(x, fd.message_type, stack)
    return x


def canon_field(v: Any, fd: Any, stack: List[str]) -> Any:
    if v is None:
        return None
    if is_map(fd):
        vfd = fd.message_type.fields_by_name["value"]
        # A map has no order (protobuf's Python maps iterate in their own).
        return sorted(((k, canon_value(x, vfd, stack)) for k, x in v), key=lambda e: e[0])
    if repeated(fd):
        return [canon_value(x, fd, stack) for x in v]
    return canon_value(v, fd, stack)


def canon(v: Any, desc: Any, steps: List[str]) -> Any:
    if not steps:
        return canon_whole(v, desc, [])
    fd = desc.fields_by_name[steps[0]]
    if len(steps) == 1:
        return canon_field(v, fd, [])
    if v is None:
        return None
    if repeated(fd):
        return [canon(x, fd.message_type, steps[1:]) for x in v]
    return canon(v, fd.message_type, steps[1:])


def same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN, -0.0 not equal to 0.0."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(type(a) is type(b) and a == b)


CASES: Dict[str, Tuple[str, List[str]]] = {
    "shapes": (
        "rwtest.Shapes",
        [
            "",
            "f_double",
            "f_float",
            "f_int64",
            "f_uint64",
            "f_sint32",
            "f_fixed64",
            "f_bool",
            "f_string",
            "f_bytes",
            "opt_int32",
            "opt_string",
            "r_int32",
            "r_float",
            "r_double",
            "r_string",
            "r_bytes",
            "inner",
            "inner.a",
            "inner.children",
            "inner.children.b",
            "inners",
            "inners.children",
            "color",
            "colors",
            "pick_int",
            "pick_text",
            "pick_inner",
            "pick_inner.a",
            "m_str_int",
            "m_int64_str",
            "m_bool_inner",
            "m_uint32_color",
        ],
    ),
    "legacy": (
        "rwtest.Legacy",
        ["", "with_default", "name", "kind", "unpacked", "packed_ints", "blob", "grp", "grp.g"],
    ),
    "wkt": (
        "rwtest.Wkt",
        [
            "",
            "ts",
            "tss",
            "dur.nanos",
            "w_int32.value",
            "w_bytes",
            "w_int32s",
            "st",
            "val",
            "lst",
            "mask.paths",
            "any",
            "vals",
            "durs.seconds",
            "anys.type_url",
        ],
    ),
}


@pytest.mark.parametrize("enum_names", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_columns_are_what_protobuf_parses(name: str, enum_names: bool) -> None:
    message, paths = CASES[name]
    data, cls = load(name, message)
    path = SCHEMA / f"{name}.tfrecord"
    records = [cls.FromString(p) for p in payloads(path)]
    ids = list(range(len(records)))
    batch = pa.record_batch(
        _native.schema_columns(data, message, str(path), ids, paths, enum_names=enum_names)
    )
    assert batch.num_rows == len(records)
    assert batch.schema.names == [p or message for p in paths]
    for i, p in enumerate(paths):
        steps = p.split(".") if p else []
        column = batch.column(i)
        want = pa.array([oracle(r, steps, enum_names) for r in records], type=column.type)
        got_values = [canon(v, cls.DESCRIPTOR, steps) for v in column.to_pylist()]
        want_values = [canon(v, cls.DESCRIPTOR, steps) for v in want.to_pylist()]
        for row, (g, w) in enumerate(zip(got_values, want_values)):
            assert same(g, w), f"{name} record {row}, path {p!r}:\n got  {g!r}\n want {w!r}"


def test_ids_pick_rows_and_negative_ids_count_from_the_end() -> None:
    data, cls = load("shapes", "rwtest.Shapes")
    path = str(SCHEMA / "shapes.tfrecord")
    records = [cls.FromString(p) for p in payloads(SCHEMA / "shapes.tfrecord")]
    batch = pa.record_batch(_native.schema_columns(data, "rwtest.Shapes", path, [5, -1, 5], ["f_int64"]))
    assert batch.column(0).to_pylist() == [records[5].f_int64, records[-1].f_int64, records[5].f_int64]


def test_errors() -> None:
    import recordwire

    data, _ = load("shapes", "rwtest.Shapes")
    path = str(SCHEMA / "shapes.tfrecord")
    with pytest.raises(recordwire.Error, match=r"has no field \"nope\" \(its fields: a, b, children\)"):
        _native.schema_columns(data, "rwtest.Shapes", path, [0], ["inner.nope"])
    with pytest.raises(IndexError):
        _native.schema_columns(data, "rwtest.Shapes", path, [10_000], ["f_int64"])
    with pytest.raises(recordwire.Error, match="no message"):
        _native.schema_columns(data, "rwtest.Nope", path, [0], ["f_int64"])
