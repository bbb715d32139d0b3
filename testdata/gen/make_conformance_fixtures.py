#!/usr/bin/env python3
"""Writes testdata/schema/conformance/: protobuf's own conformance schemas (test_messages_proto2.proto,
test_messages_proto3.proto, copied unchanged from protocolbuffers/protobuf, see testdata/schema/README.md)
and seeded random messages of TestAllTypesProto2 / TestAllTypesProto3 with what Google's protobuf for
Python makes of them (the oracle), in the format of testdata/schema/*.expected.jsonl.

    python testdata/gen/make_conformance_fixtures.py              # regenerate, then cross-check with upb
    python testdata/gen/make_conformance_fixtures.py --check-upb  # only the cross-check

1. Compiles both .proto files with grpc_tools' protoc into one FileDescriptorSet,
   testdata/schema/conformance/conformance.pb (--include_imports: it holds the seven
   google/protobuf/*.proto files the proto3 schema imports, grpcio-tools' copies). The classes are made
   at run time (descriptor_pool + message_factory), as recordwire gets its schema.
2. Generates seeded random messages (100 of each) with edge values (min/max of every integer type,
   -0.0, NaN, +-inf, denormals, empty, long and non-ASCII strings, every enum value, unknown numbers of
   the open proto3 enums, the NullValue fields), nested and recursive messages, maps, oneofs, every
   well-known type field (proto3), groups and extensions (proto2); then rewrites the wire bytes of many
   of them into non-canonical but valid encodings (the rewrites of make_schema_fixtures.py, made generic
   over these schemas, plus closed enums' unknown values, split groups and repeated extensions).
3. The oracle, the TFRecord framing, the checks and the upb cross-check are make_schema_fixtures.py's
   (imported): dict, dict_all, deterministic_b64, noncanonical, as testdata/schema/README.md defines
   them.

Never set: TestAllTypesProto2.message_set_correct (a MessageSet: its extensions travel in the
MessageSet wire format, items of group 1, which recordwire does not decode; see the README).

Deterministic: fixed seeds, no time stamps; running it twice gives byte-identical files.
"""

import os
import sys

CHECK_UPB = "--check-upb" in sys.argv
# Must be set before google.protobuf is imported (make_schema_fixtures sets the same).
os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "upb" if CHECK_UPB else "python"

import base64  # noqa: E402
import collections  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_schema_fixtures as base  # noqa: E402
from make_schema_fixtures import (  # noqa: E402
    FD, I32, I64, LEN, SGROUP, EGROUP, VARINT, Tok, explicit_default_tok, field_bytes, insert_at_random,
    join, nonzero_value, packable, rand_value, split_fields, wrong_tok)
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: E402
from wire import ld, tag, varint  # noqa: E402

OUT = os.path.join(base.OUT, "conformance")
PB = os.path.join(OUT, "conformance.pb")
P2 = "protobuf_test_messages.proto2.TestAllTypesProto2"
P3 = "protobuf_test_messages.proto3.TestAllTypesProto3"
# base.write_outputs/check_upb take names relative to testdata/schema.
SETS = [("conformance/proto2", P2), ("conformance/proto3", P3)]
N = 100  # dict_all of a TestAllTypesProto3 alone is ~3.3 KB: fewer records keep the files small
SEEDS = {P2: 20250702, P3: 20250703}
SKIP = {"message_set_correct"}
MAX_DEPTH = 2  # nesting of random messages (the specials go deeper)


def compile_protos():
    rc = subprocess.call([sys.executable, "-m", "grpc_tools.protoc", "-I" + OUT, "--include_imports",
                          "--descriptor_set_out=" + PB, "test_messages_proto2.proto",
                          "test_messages_proto3.proto"], cwd=OUT)
    if rc != 0:
        raise SystemExit("protoc failed")


def load_pool():
    with open(PB, "rb") as f:
        fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fdp in fds.file:
        pool.Add(fdp)
    return pool


def cls_of(pool, name):
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


# ---------------------------------------------------------------------------------------------------
# Random messages, generic over the descriptors.


def is_map(fd):
    return fd.message_type is not None and fd.message_type.GetOptions().map_entry


def fill_any(rng, pool, a, depth):
    k = rng.choice(["foreign", "nested", "all", "duration", "timestamp", "int32", "string", "struct",
                    "value", "mask", "empty", "none", "url_only"] + (["any"] if depth < 2 else []))
    url = base.TYPE_URL_PREFIX
    if k == "none":
        a.SetInParent()
        return
    if k == "url_only":  # type_url only, no value bytes: the message with no fields
        a.type_url = url + "protobuf_test_messages.proto3.ForeignMessage"
        return
    name = {"foreign": "protobuf_test_messages.proto3.ForeignMessage",
            "nested": P3 + ".NestedMessage", "all": P3, "duration": "google.protobuf.Duration",
            "timestamp": "google.protobuf.Timestamp", "int32": "google.protobuf.Int32Value",
            "string": "google.protobuf.StringValue", "struct": "google.protobuf.Struct",
            "value": "google.protobuf.Value", "mask": "google.protobuf.FieldMask",
            "empty": "google.protobuf.Empty", "any": "google.protobuf.Any"}[k]
    sub = cls_of(pool, name)()
    fill_message(rng, pool, sub, depth + 1)
    base.pack_any(a, sub)


def fill_well_known(rng, pool, m, depth):
    """m is a google.protobuf.* message: a valid value of it (MessageToDict raises on invalid ones)."""
    n = m.DESCRIPTOR.full_name[len("google.protobuf."):]
    if n == "Timestamp":
        base.fill_timestamp(rng, m)
    elif n == "Duration":
        base.fill_duration(rng, m)
    elif n == "FieldMask":
        m.paths.extend(base.rand_mask_path(rng) for _ in range(rng.randint(0, 3)))
        base.check_mask(m)
    elif n == "Struct":
        base.fill_struct(rng, m, 1)
    elif n == "Value":
        base.fill_value(rng, m, 1)
    elif n == "ListValue":
        base.fill_list(rng, m, 1)
    elif n == "Any":
        fill_any(rng, pool, m, depth)
    elif n.endswith("Value"):  # a wrapper: present at its default (30 %) or a random value
        if rng.random() >= 0.3:
            m.value = rand_value(rng, m.DESCRIPTOR.fields_by_name["value"])
    # Empty: nothing


def fill_message(rng, pool, m, depth, p=None):
    m.SetInParent()
    if m.DESCRIPTOR.full_name.startswith("google.protobuf."):
        fill_well_known(rng, pool, m, depth)
        return
    if p is None:
        p = rng.choice([0.03, 0.06, 0.1]) / depth if depth else rng.choice([0.03, 0.06, 0.1, 0.2])
    d = m.DESCRIPTOR
    for fd in d.fields:
        if fd.name in SKIP or fd.containing_oneof is not None or rng.random() >= p:
            continue
        set_random(rng, pool, m, fd, depth)
    for o in d.oneofs:
        if rng.random() < 0.5:
            set_random(rng, pool, m, rng.choice(o.fields), depth)


def set_random(rng, pool, m, fd, depth):
    if fd.message_type is not None and not is_map(fd) and depth >= MAX_DEPTH:
        return
    if fd.message_type is not None and fd.message_type.full_name in (P2, P3) and rng.random() < 0.6:
        return  # a nested TestAllTypes: rarer (each adds ~100 defaults to dict_all)
    if is_map(fd):
        kfd, vfd = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
        mp = getattr(m, fd.name)
        for _ in range(rng.randint(0, 4)):
            key = rand_value(rng, kfd)
            if vfd.message_type is not None:
                if depth < MAX_DEPTH:
                    fill_message(rng, pool, mp[key], depth + 1)
            else:
                mp[key] = rand_value(rng, vfd)
    elif fd.is_repeated:
        lst = getattr(m, fd.name)
        for _ in range(rng.randint(0, 5)):
            if fd.message_type is not None:
                fill_message(rng, pool, lst.add(), depth + 1)
            else:
                lst.append(rand_value(rng, fd))
    elif fd.message_type is not None:
        fill_message(rng, pool, getattr(m, fd.name), depth + 1)
    else:
        setattr(m, fd.name, rand_value(rng, fd))


def set_extensions(rng, pool, m):
    """proto2: the extensions of TestAllTypesProto2 (int32, string, bytes and the group GroupField)."""
    for name in ("extension_int32", "extension_string", "extension_bytes", "groupfield"):
        if rng.random() >= 0.25:
            continue
        ext = pool.FindExtensionByName("protobuf_test_messages.proto2." + name)
        if name == "groupfield":
            g = m.Extensions[ext]
            g.SetInParent()
            if rng.random() < 0.7:
                g.group_int32 = base.rand_int(rng, "int32")
            if rng.random() < 0.7:
                g.group_uint32 = base.rand_int(rng, "uint32")
        else:
            m.Extensions[ext] = rand_value(rng, ext)


def gen(rng, pool, cls):
    m = cls()
    fill_message(rng, pool, m, 0)
    if cls.DESCRIPTOR.full_name == P2:
        set_extensions(rng, pool, m)
    return m


# ---------------------------------------------------------------------------------------------------
# Hand-made canonical records.

INT_TYPES = ("int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32",
             "sfixed64")


def specials(pool, cls):
    d = cls.DESCRIPTOR
    proto3 = d.full_name == P3
    out = []
    out.append(("empty", cls()))
    for label, pick in (("maxima", max), ("minima", min)):
        m = cls()
        for t in INT_TYPES:
            lo, hi = base.INT_RANGES[base.KIND_RANGE[t]]
            setattr(m, "optional_" + t, pick(lo, hi))
            getattr(m, "repeated_" + t).extend([lo, hi, 0])
            getattr(m, "packed_" + t).extend([hi, lo])
            getattr(m, "unpacked_" + t).extend([lo, 0, hi])
            getattr(m, "map_%s_%s" % (t, t))[pick(lo, hi)] = pick(lo, hi)
            getattr(m, "map_%s_%s" % (t, t))[0] = lo if pick is max else hi
        m.optional_float = base.F32_MAX if pick is max else -base.F32_MAX
        m.optional_double = 1.7976931348623157e308 if pick is max else -1.7976931348623157e308
        m.optional_bool = pick is max
        m.optional_string = "\U0010ffff" * 300 if pick is max else "\x00"
        m.optional_bytes = bytes(range(256)) * 4 if pick is max else b"\x00"
        m.oneof_uint64 = 2**64 - 1 if pick is max else 0
        out.append((label, m))
    m = cls()  # special floats everywhere
    fl = [0.0, -0.0, math.nan, math.inf, -math.inf, base.F32_MIN_DENORMAL, base.F32_MIN_NORMAL, 0.1,
          16777217.0, 1e-7]
    db = [0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324, 2.2250738585072014e-308, 0.1, 1 / 3, 1e16,
          1e22, 9007199254740993.0, 123456789.125]
    m.optional_float, m.optional_double = -0.0, 5e-324
    for pre in ("repeated_", "packed_", "unpacked_"):
        getattr(m, pre + "float").extend(fl)
        getattr(m, pre + "double").extend(db)
    for i, x in enumerate(db):
        m.map_int32_double[i - 3] = x
    for i, x in enumerate(fl):
        m.map_int32_float[i] = x
    m.oneof_double = math.nan
    out.append(("floats", m))
    m = cls()  # every enum value, by every route
    ne = d.enum_types_by_name["NestedEnum"]
    fe = pool.FindEnumTypeByName(d.file.package + (".ForeignEnum" if proto3 else ".ForeignEnumProto2"))
    nums = [v.number for v in ne.values]
    m.optional_nested_enum = -1
    m.optional_foreign_enum = fe.values[-1].number
    for pre in ("repeated_", "packed_", "unpacked_"):
        getattr(m, pre + "nested_enum").extend(nums + ([5, -7, 2**31 - 1] if proto3 else []))
    m.repeated_foreign_enum.extend(v.number for v in fe.values)
    for i, n in enumerate(nums + ([9] if proto3 else [])):
        m.map_string_nested_enum["k%d" % i] = n
        m.map_string_foreign_enum["é%d" % i] = n if n >= 0 else 0
    m.oneof_enum = -1
    if proto3:
        m.optional_aliased_enum = 2  # ALIAS_BAZ, MOO, moo, bAz: the first name
    out.append(("enums", m))
    m = cls()  # recursion through recursive_message and corecursive, 18 levels (past 100: src/schema/tests.rs)
    cur = m
    for i in range(12):
        cur.optional_int32 = i
        cur = cur.recursive_message if i % 2 else cur.optional_nested_message.corecursive
    cur.optional_string = "bottom"
    out.append(("deep", m))
    if proto3:
        m = cls()  # NullValue: prints as JSON null
        m.optional_null_value = 0
        m.oneof_null_value = 0
        m.optional_value.null_value = 0
        m.repeated_value.add().null_value = 0
        out.append(("null_value", m))
        m = cls()  # every well-known type field, present at its zero contents
        for fd in d.fields:
            if fd.message_type is not None and fd.message_type.full_name.startswith("google.protobuf."):
                if fd.is_repeated:
                    getattr(m, fd.name).add()
                else:
                    getattr(m, fd.name).SetInParent()
        out.append(("wkt_zero", m))
        m = cls()  # an Any holding a TestAllTypesProto3 holding an Any
        inner = cls(optional_int32=5, optional_string="in")
        base.pack_any(inner.optional_any, cls_of(pool, "google.protobuf.Duration")(seconds=-1, nanos=-5))
        base.pack_any(m.optional_any, inner)
        out.append(("any_nested", m))
    else:
        m = cls()  # groups and every extension
        m.data.group_int32 = -5
        m.data.group_uint32 = 2**32 - 1
        m.multiwordgroupfield.SetInParent()
        m.Extensions[pool.FindExtensionByName("protobuf_test_messages.proto2.extension_int32")] = -1
        m.Extensions[pool.FindExtensionByName("protobuf_test_messages.proto2.extension_string")] = "ext é"
        m.Extensions[pool.FindExtensionByName("protobuf_test_messages.proto2.extension_bytes")] = b"\xff"
        m.Extensions[pool.FindExtensionByName("protobuf_test_messages.proto2.groupfield")].group_int32 = 3
        for n in ("default_int32", "default_string", "default_bytes", "default_float"):
            setattr(m, n, getattr(m, n))  # present at its [default = ...]
        out.append(("groups_extensions", m))
    m = cls()  # the names of fields 401-418 (json_name rules)
    for fd in d.fields:
        if 401 <= fd.number <= 418:
            setattr(m, fd.name, fd.number)
    out.append(("field_names", m))
    return out


# ---------------------------------------------------------------------------------------------------
# Wire-level rewrites (all valid protobuf). Those of make_schema_fixtures.py that are generic are used
# as they are; these are the ones that name fields.


def singular_scalars(d):
    return [f.name for f in d.fields if not f.is_repeated and f.message_type is None
            and f.containing_oneof is None and f.name not in SKIP]


def nc_dup_scalar(rng, cls, b):
    return base.nc_dup_scalar(rng, cls, b, names=singular_scalars(cls.DESCRIPTOR))


def nc_split_message(rng, cls, b):
    """A singular message (or group) field in two or three occurrences: they merge."""
    d = cls.DESCRIPTOR
    toks = split_fields(b)
    cand = [i for i, t in enumerate(toks) if t.wt in (LEN, SGROUP) and d.fields_by_number.get(t.fn)
            is not None and d.fields_by_number[t.fn].message_type is not None
            and not d.fields_by_number[t.fn].is_repeated
            and d.fields_by_number[t.fn].message_type.full_name != "google.protobuf.Any"]
    if not cand:
        return None
    i = rng.choice(cand)
    t = toks[i]
    sub = split_fields(t.payload)
    k = rng.randint(0, len(sub))
    pieces = [join(sub[:k]), join(sub[k:])]
    if t.wt == SGROUP:
        new = [split_fields(tag(t.fn, SGROUP) + p + tag(t.fn, EGROUP))[0] for p in pieces]
    else:
        new = [Tok(t.fn, LEN, ld(t.fn, p), p) for p in pieces]
    toks = toks[:i] + new[:1] + insert_at_random(rng, toks[i + 1:], new[1:])
    return join(toks), "split_message:%s*2" % d.fields_by_number[t.fn].name


def nc_packed(rng, cls, b):
    """base.nc_packed, unless a repeated field already holds an element of a wrong wire type (which
    that rewrite would pack)."""
    d = cls.DESCRIPTOR
    for t in split_fields(b):
        fd = d.fields_by_number.get(t.fn)
        if fd is not None and packable(fd) and t.wt not in (LEN, base.elem_wt(fd)):
            return None
    return base.nc_packed(rng, cls, b)


def nc_unknown(rng, cls, b):
    return base.nc_unknown(rng, cls, b, nested=("optional_nested_message", "recursive_message"))


def wrong_table(d):
    """(field, wire type, payload): known numbers with a wire type their type does not allow."""
    out = []
    for fd in d.fields:
        if fd.name in SKIP:
            continue
        if fd.type in (FD.TYPE_MESSAGE, FD.TYPE_STRING, FD.TYPE_BYTES):
            out.append((fd.name, rng_pick(fd.number, [VARINT, I32, I64]), None))
        elif fd.type == FD.TYPE_GROUP:
            out.append((fd.name, LEN, b"\x08\x01"))
        else:
            w = base.elem_wt(fd)
            wrong = [x for x in (VARINT, I32, I64) if x != w] + ([] if packable(fd) else [LEN])
            out.append((fd.name, rng_pick(fd.number, wrong), None))
    return out


def rng_pick(n, xs):
    """One of xs, by the field number (the table stays the same from record to record)."""
    return xs[n % len(xs)]


def nc_wrong_wire_type(rng, cls, b):
    d = cls.DESCRIPTOR
    table = []
    for name, wt, p in wrong_table(d):
        if p is None:
            p = {VARINT: varint(rng.choice([1, 300, 2**64 - 1])), I32: struct.pack("<I", rng.getrandbits(32)),
                 I64: struct.pack("<Q", rng.getrandbits(64)), LEN: b"\x01\x02"}[wt]
        table.append((name, wt, p))
    return base.nc_wrong_wire_type(rng, cls, b, table=table)


def map_kv(rng, cls, fd):
    """(key bytes, value bytes) of a random entry of map field fd."""
    m = cls()
    kfd, vfd = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
    k = rand_value(rng, kfd)
    if vfd.message_type is not None:
        sub = getattr(m, fd.name)[k]
        setattr(sub, sub.DESCRIPTOR.fields[0].name, rng.randint(1, 1000))  # a or c: never empty
    else:
        getattr(m, fd.name)[k] = nonzero_value(rng, vfd)
    parts = split_fields(split_fields(m.SerializePartialToString())[0].payload)
    return join([t for t in parts if t.fn == 1]), join([t for t in parts if t.fn == 2])


def nc_map(rng, cls, b):
    """Map entries written unusually: a key twice (the last entry wins, whole), value before key, key
    missing (default key), value missing (default value), the key twice inside one entry."""
    d = cls.DESCRIPTOR
    maps = [f for f in d.fields if is_map(f)]
    toks = split_fields(b)
    new, labels = [], []
    for kind in rng.sample(["dup_key", "value_first", "no_key", "no_value", "key_twice"], rng.randint(1, 3)):
        fd = rng.choice(maps)
        kb, vb = map_kv(rng, cls, fd)
        if kind == "dup_key":
            _, vb2 = map_kv(rng, cls, fd)
            entries = [kb + vb, kb + vb2]
        elif kind == "value_first":
            entries = [vb + kb]
        elif kind == "no_key":
            entries = [vb]
        elif kind == "no_value":
            entries = [kb]
        else:
            kb2, _ = map_kv(rng, cls, fd)
            entries = [kb2 + vb + kb]
        new += [Tok(fd.number, LEN, ld(fd.number, p), p) for p in entries]
        labels.append("%s(%s)" % (kind, fd.name))
    return join(insert_at_random(rng, toks, new)), "map_entry_odd:" + ",".join(labels)


def nc_oneof_two(rng, cls, b):
    """Several members of oneof_field in a row: the last wins; two oneof_nested_message merge."""
    d = cls.DESCRIPTOR
    o = d.oneofs_by_name["oneof_field"]
    fns = {f.number for f in o.fields}
    toks = [t for t in split_fields(b) if t.fn not in fns]
    members = [f for f in o.fields if f.name != "oneof_null_value"]
    seq, names = [], []
    for _ in range(rng.randint(2, 3)):
        f = rng.choice(members)
        if f.message_type is not None:
            p = tag(1, VARINT) + varint(rng.randint(-3, 99)) if rng.random() < 0.7 else b""
            seq.append(Tok(f.number, LEN, ld(f.number, p), p))
        else:
            seq += split_fields(field_bytes(cls, f, rand_value(rng, f)))
        names.append(f.name[len("oneof_"):])
    return join(insert_at_random(rng, toks, seq)), "oneof_two:" + ",".join(names)


def nc_closed_enum_unknown(rng, cls, b):
    """proto2: closed enums written with numbers they do not name: those are unknown fields (a singular
    field keeps its last named value; a repeated one leaves the number out)."""
    d = cls.DESCRIPTOR
    toks = split_fields(b)
    vals = [rng.choice([0, 1, 2, -1]), rng.choice([3, 7, 2**31 - 1, -2]), rng.choice([3, 1])]
    new = [split_fields(tag(21, VARINT) + varint(v))[0] for v in vals]
    new.append(split_fields(tag(51, VARINT) + varint(5))[0])
    new.append(split_fields(ld(88, varint(1) + varint(9) + varint(2)))[0])
    # Not here: a oneof member (oneof_enum) with an unknown number. Pure Python clears the oneof's other
    # member; upb keeps it (see the README).
    assert d.fields_by_number[21].name == "optional_nested_enum"
    return join(insert_at_random(rng, toks, new)), "closed_enum_unknown:%s" % ",".join(map(str, vals))


def nc_extension_twice(rng, cls, b):
    """proto2: extension_int32 and the group extension written twice: last wins / merges."""
    toks = split_fields(b)
    new = [split_fields(tag(120, VARINT) + varint(rng.randint(-5, 5)))[0],
           split_fields(tag(121, SGROUP) + tag(122, VARINT) + varint(1) + tag(121, EGROUP))[0],
           split_fields(tag(120, VARINT) + varint(rng.randint(-5, 5)))[0],
           split_fields(tag(121, SGROUP) + tag(123, VARINT) + varint(2) + tag(121, EGROUP))[0]]
    return join(insert_at_random(rng, toks, new)), "extension_twice"


NC_COMMON = [base.nc_unpacked, nc_packed, base.nc_mixed_packed, nc_dup_scalar, nc_split_message,
             base.nc_reordered, nc_unknown, nc_wrong_wire_type, nc_map, nc_oneof_two, base.nc_overlong]
NC = {P2: NC_COMMON + [nc_closed_enum_unknown, nc_extension_twice], P3: NC_COMMON}


# ---------------------------------------------------------------------------------------------------


def check_upb(sets):
    """Re-parses every payload with the upb runtime: the same dict and dict_all (key order ignored).
    The deterministic bytes are not compared: upb orders map entries and extensions otherwise (it
    writes extensions among the fields by number, pure Python after them); counted only."""
    problems, other_bytes = 0, collections.Counter()
    for name, cls in sets:
        with open(os.path.join(base.OUT, name + ".tfrecord"), "rb") as f:
            payloads = base.tf_read(f.read())
        with open(os.path.join(base.OUT, name + ".expected.jsonl"), encoding="utf-8") as f:
            lines = [json.loads(x) for x in f.read().split("\n") if x]
        assert len(payloads) == len(lines)
        for i, (p, exp) in enumerate(zip(payloads, lines)):
            d, d_all, det, _ = base.oracle(cls, p)
            if (json.loads(json.dumps(d)), json.loads(json.dumps(d_all))) != (exp["dict"], exp["dict_all"]):
                problems += 1
                print("upb differs: %s record %d (%s)\n  upb:    %s\n  python: %s" % (
                    name, i, exp["noncanonical"], d, exp["dict"]))
            if base64.b64encode(det).decode("ascii") != exp["deterministic_b64"]:
                other_bytes[name] += 1
    print("upb cross-check: %d records print otherwise; deterministic bytes in another order: %s" % (
        problems, ", ".join("%s %d" % (n, other_bytes[n]) for n, _ in sets)))
    return problems


def main():
    pool_classes = lambda pool: [(n, cls_of(pool, full)) for n, full in SETS]  # noqa: E731
    if CHECK_UPB:
        sys.exit(1 if check_upb(pool_classes(load_pool())) else 0)
    compile_protos()
    pool = load_pool()
    for name, cls in pool_classes(pool):
        full = cls.DESCRIPTOR.full_name
        rng = random.Random(SEEDS[full])
        recs = base.build(cls, rng, specials(pool, cls), lambda r, c: gen(r, pool, c), NC[full], N, 0.6)
        base.write_outputs(name, cls, recs)
        c = collections.Counter(part.split(":")[0] for _, lab in recs if lab for part in lab.split(" + "))
        print("%s: %d records, %d non-canonical; rewrites used: %s" % (
            name, len(recs), sum(1 for _, lab in recs if lab), ", ".join("%s %d" % kv for kv in sorted(c.items()))))
    rc = subprocess.call([sys.executable, os.path.abspath(__file__), "--check-upb"])
    assert rc == 0, "upb cross-check failed"
    total = 0
    for fn in sorted(os.listdir(OUT)):
        path = os.path.join(OUT, fn)
        size = os.path.getsize(path)
        total += size
        with open(path, "rb") as f:
            print("  %-32s %7d bytes  sha256 %s" % (fn, size, hashlib.sha256(f.read()).hexdigest()[:16]))
    print("  total %d bytes" % total)


if __name__ == "__main__":
    main()
