#!/usr/bin/env python3
"""Writes testdata/schema/: protobuf messages read with a schema given at run time, and what
Google's protobuf for Python makes of them (the oracle).

    python testdata/gen/make_schema_fixtures.py              # regenerate, then cross-check with upb
    python testdata/gen/make_schema_fixtures.py --check-upb  # only the cross-check (run by the above)

What it does, from the repository root:

1. Compiles testdata/schema/shapes.proto (proto3), legacy.proto (proto2) and wkt.proto (proto3, the
   well-known types) with grpc_tools' protoc (a subprocess, which also puts grpc_tools' copy of
   google/protobuf/*.proto on the include path) into binary FileDescriptorSets: testdata/schema/shapes.pb,
   legacy.pb and wkt.pb (`--include_imports --descriptor_set_out`; wkt.pb thus holds the seven
   imported google/protobuf files too). No generated Python code: the message classes are made at run
   time from the descriptor sets (descriptor_pool + message_factory.GetMessageClass), the way recordwire
   gets its schema.
2. Generates seeded random messages (60 Shapes, 30 Legacy, 40 Wkt) with edge values, and rewrites the
   wire bytes of many of them into NON-CANONICAL but valid encodings (packed fields unpacked or mixed, a
   singular field repeated, a message split in two occurrences, fields out of order, unknown fields, known
   field numbers with the wrong wire type, duplicate map keys, odd map entries, two oneof members,
   overlong varints, out-of-range varints, a Timestamp split in two, a Duration field written twice, ...).
3. For each record, the oracle is what the runtime class makes of the final bytes (`FromString`):
   `json_format.MessageToDict(msg, preserving_proto_field_name=True)`, the same with
   `always_print_fields_with_no_presence=True` (both with `descriptor_pool=` the pool made from the .pb
   file, where an Any's type is looked up), and `msg.SerializeToString(deterministic=True)`
   (SerializePartialToString for the one Legacy record that lacks its required field).
4. Writes the (possibly non-canonical) bytes as TFRecord files and the oracle as JSON Lines.

Generation runs with the pure-Python protobuf runtime (PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python):
with upb, map fields iterate in hash order, so MessageToDict's map key order would not be stable.
The script then reruns itself with `--check-upb`, which re-parses every payload with the upb runtime
and asserts the same dict, dict_all (key order ignored) and deterministic bytes.

Deterministic: fixed seeds, no time stamps; running it twice gives byte-identical files.
"""

import os
import sys

CHECK_UPB = "--check-upb" in sys.argv
# Must be set before google.protobuf is imported.
os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "upb" if CHECK_UPB else "python"

import base64  # noqa: E402
import collections  # noqa: E402
import hashlib  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory  # noqa: E402
from google.protobuf.descriptor import FieldDescriptor as FD  # noqa: E402
from google.protobuf.internal import api_implementation  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire import ld, masked_crc, tag, tf_frame, varint  # noqa: E402

assert api_implementation.Type() == os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"], (
    api_implementation.Type())

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "testdata", "schema")

N_SHAPES = 60
N_LEGACY = 30
SEED_SHAPES = 20240601
SEED_LEGACY = 20240602
N_WKT = 40
SEED_WKT = 20240603
SETS = [("shapes", "rwtest.Shapes"), ("legacy", "rwtest.Legacy"), ("wkt", "rwtest.Wkt")]

M64 = (1 << 64) - 1

# ---------------------------------------------------------------------------------------------------
# CRC32C and TFRecord framing (same table-driven code as python/tests/conftest.py).


def tf_read(buf):
    """Payloads of a TFRecord stream; asserts both CRCs of every frame."""
    out, pos = [], 0
    while pos < len(buf):
        assert len(buf) - pos >= 16, "truncated"
        (n,) = struct.unpack_from("<Q", buf, pos)
        (lc,) = struct.unpack_from("<I", buf, pos + 8)
        assert lc == masked_crc(buf[pos:pos + 8]), "length crc"
        data = buf[pos + 12:pos + 12 + n]
        assert len(data) == n, "truncated data"
        (dc,) = struct.unpack_from("<I", buf, pos + 12 + n)
        assert dc == masked_crc(data), "data crc"
        out.append(bytes(data))
        pos += 16 + n
    return out


# ---------------------------------------------------------------------------------------------------
# Schema: compile with protoc, load the descriptor sets, make classes at run time.


def compile_proto(name):
    out = os.path.join(OUT, name + ".pb")
    rc = subprocess.call([sys.executable, "-m", "grpc_tools.protoc", "-I" + OUT, "--include_imports",
                          "--descriptor_set_out=" + out, name + ".proto"], cwd=OUT)
    if rc != 0:
        raise SystemExit("protoc failed on %s.proto" % name)
    return out


def load_class(pb_path, full_name):
    with open(pb_path, "rb") as f:
        fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fdp in fds.file:
        pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))


# ---------------------------------------------------------------------------------------------------
# Wire format helpers.

VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5

FIXED32_TYPES = (FD.TYPE_FIXED32, FD.TYPE_SFIXED32, FD.TYPE_FLOAT)
FIXED64_TYPES = (FD.TYPE_FIXED64, FD.TYPE_SFIXED64, FD.TYPE_DOUBLE)
LEN_TYPES = (FD.TYPE_STRING, FD.TYPE_BYTES, FD.TYPE_MESSAGE)


def overlong_varint(n, total):
    """The varint of n padded with redundant 0x80 continuation bytes to `total` bytes (<= 10)."""
    v = bytearray(varint(n))
    assert len(v) <= total <= 10
    v[-1] |= 0x80
    v += b"\x80" * (total - len(v) - 1) + b"\x00"
    return bytes(v)


def read_varint(b, pos):
    shift = result = 0
    while True:
        c = b[pos]
        pos += 1
        result |= (c & 0x7F) << shift
        if not c & 0x80:
            return result & M64, pos
        shift += 7


Tok = collections.namedtuple("Tok", "fn wt raw payload")


def split_fields(b):
    """Top-level fields of a message's bytes as Tok(field number, wire type, raw bytes with the tag,
    payload: the value bytes, the LEN contents or the group contents)."""
    toks, pos = [], 0
    while pos < len(b):
        start = pos
        key, pos = read_varint(b, pos)
        fn, wt = key >> 3, key & 7
        if wt == VARINT:
            vstart = pos
            _, pos = read_varint(b, pos)
            payload = b[vstart:pos]
        elif wt == I64:
            payload = b[pos:pos + 8]
            pos += 8
        elif wt == I32:
            payload = b[pos:pos + 4]
            pos += 4
        elif wt == LEN:
            n, pos = read_varint(b, pos)
            payload = b[pos:pos + n]
            pos += n
        elif wt == SGROUP:
            gstart = pos
            while True:
                key2, _ = read_varint(b, pos)
                if key2 == (fn << 3 | EGROUP):
                    payload = b[gstart:pos]
                    _, pos = read_varint(b, pos)
                    break
                inner = split_fields_one(b, pos)
                pos = inner
        else:
            raise ValueError("unexpected wire type %d" % wt)
        toks.append(Tok(fn, wt, bytes(b[start:pos]), bytes(payload)))
    return toks


def split_fields_one(b, pos):
    """Position after the one field that starts at pos (groups skipped recursively)."""
    key, pos = read_varint(b, pos)
    fn, wt = key >> 3, key & 7
    if wt == VARINT:
        _, pos = read_varint(b, pos)
    elif wt == I64:
        pos += 8
    elif wt == I32:
        pos += 4
    elif wt == LEN:
        n, pos = read_varint(b, pos)
        pos += n
    elif wt == SGROUP:
        while True:
            key2, _ = read_varint(b, pos)
            if key2 == (fn << 3 | EGROUP):
                _, pos = read_varint(b, pos)
                return pos
            pos = split_fields_one(b, pos)
    else:
        raise ValueError("unexpected wire type %d" % wt)
    return pos


def join(toks):
    return b"".join(t.raw for t in toks)


def elem_wt(fd):
    if fd.type in FIXED32_TYPES:
        return I32
    if fd.type in FIXED64_TYPES:
        return I64
    return VARINT


def packed_elems(fd, payload):
    """Raw element bytes of a packed payload."""
    w = elem_wt(fd)
    if w == I32:
        return [payload[i:i + 4] for i in range(0, len(payload), 4)]
    if w == I64:
        return [payload[i:i + 8] for i in range(0, len(payload), 8)]
    out, pos = [], 0
    while pos < len(payload):
        s = pos
        _, pos = read_varint(payload, pos)
        out.append(payload[s:pos])
    return out


def packable(fd):
    return fd.is_repeated and fd.type not in LEN_TYPES + (FD.TYPE_GROUP,)


def unpacked_toks(fd, elems):
    return [Tok(fd.number, elem_wt(fd), tag(fd.number, elem_wt(fd)) + e, e) for e in elems]


def packed_tok(fd, elems):
    p = b"".join(elems)
    return Tok(fd.number, LEN, ld(fd.number, p), p)


def explicit_default_tok(fd):
    """A field written with its zero value (what a proto3 serializer leaves out)."""
    if fd.type in LEN_TYPES:
        return Tok(fd.number, LEN, tag(fd.number, LEN) + b"\x00", b"")
    w = elem_wt(fd)
    zero = {VARINT: b"\x00", I32: b"\x00" * 4, I64: b"\x00" * 8}[w]
    return Tok(fd.number, w, tag(fd.number, w) + zero, zero)


def insert_at_random(rng, toks, new):
    """Inserts each of `new` at a random place, keeping the order of `new`."""
    toks = list(toks)
    lo = 0
    for t in new:
        i = rng.randint(lo, len(toks))
        toks.insert(i, t)
        lo = i + 1
    return toks


def interleave_by_field(rng, toks):
    """A random merge of the per-field-number sequences: fields out of number order, but the
    occurrences of one field number keep their relative order (so the message means the same)."""
    queues = collections.OrderedDict()
    for t in toks:
        queues.setdefault(t.fn, []).append(t)
    out = []
    keys = list(queues)
    while keys:
        k = rng.choice(keys)
        out.append(queues[k].pop(0))
        if not queues[k]:
            keys.remove(k)
    return out


# ---------------------------------------------------------------------------------------------------
# Value pools.

F32_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
F32_MIN_NORMAL = struct.unpack("<f", struct.pack("<I", 0x00800000))[0]
F32_MIN_DENORMAL = struct.unpack("<f", struct.pack("<I", 0x00000001))[0]

INT_EDGES = {
    "int32": [0, -1, 1, -2**31, 2**31 - 1, 127, 128, -129, 300],
    "int64": [0, -1, 1, -2**63, 2**63 - 1, 2**53 + 1, -2**31 - 1, 2**32],
    "uint32": [0, 1, 127, 128, 2**31, 2**32 - 1],
    "uint64": [0, 1, 2**63, 2**64 - 1, 2**53 + 1, 2**32],
}
INT_RANGES = {
    "int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1),
    "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1),
}
KIND_RANGE = {  # proto type -> value range
    "int32": "int32", "sint32": "int32", "sfixed32": "int32",
    "int64": "int64", "sint64": "int64", "sfixed64": "int64",
    "uint32": "uint32", "fixed32": "uint32",
    "uint64": "uint64", "fixed64": "uint64",
}
DOUBLE_EDGES = [0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324, 1.7976931348623157e308,
                -1.7976931348623157e308, 2.2250738585072014e-308, 0.1, 1 / 3, 1e16, 1e-5, 1e-7, -2.5,
                123456789.125, 9007199254740993.0]
FLOAT_EDGES = [0.0, -0.0, math.nan, math.inf, -math.inf, F32_MIN_DENORMAL, 3 * F32_MIN_DENORMAL,
               F32_MAX, -F32_MAX, F32_MIN_NORMAL, 0.1, 1 / 3, 16777217.0, 1e-7, 65504.0, -2.5, 1e10]
STRINGS = ["", "a", "größe", "日本語", "emoji 😀", 'tab\tnl\n"q"\\', "nul\x00 us\x1f del\x7f",
           "\u2028\u2029", "ΩΩΩ", "x" * 40, "café\u0301", "\U0010ffff"]
STR_ALPHABET = "abcXYZ019 _-.éßΩ日本😀\t\n\"\\\x00"
BYTES = [b"", b"\x00", b"\xff\xfe", bytes(range(0, 256, 17)), b"plain ascii", b"\x80\x81\x82"]


def rand_int(rng, kind):
    r = KIND_RANGE[kind]
    if rng.random() < 0.5:
        return rng.choice(INT_EDGES[r])
    lo, hi = INT_RANGES[r]
    if rng.random() < 0.5:  # small magnitudes too, not only 10-byte varints
        return max(lo, min(hi, rng.randint(-1000, 1000)))
    return rng.randint(lo, hi)


def rand_double(rng):
    x = rng.random()
    if x < 0.4:
        return rng.choice(DOUBLE_EDGES)
    if x < 0.7:
        return rng.uniform(-1e6, 1e6)
    while True:  # random bit pattern, no NaN (NaN payloads differ between runtimes, see README)
        d = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if not math.isnan(d):
            return d


def rand_float(rng):
    x = rng.random()
    if x < 0.4:
        return rng.choice(FLOAT_EDGES)
    if x < 0.7:
        return struct.unpack("<f", struct.pack("<f", rng.uniform(-1000, 1000)))[0]
    while True:
        f = struct.unpack("<f", rng.getrandbits(32).to_bytes(4, "little"))[0]
        if not math.isnan(f):
            return f


def rand_string(rng):
    if rng.random() < 0.5:
        return rng.choice(STRINGS)
    return "".join(rng.choice(STR_ALPHABET) for _ in range(rng.randint(1, 10)))


def rand_bytes(rng):
    if rng.random() < 0.5:
        return rng.choice(BYTES)
    return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 12)))


def rand_value(rng, fd):
    t = fd.type
    if t == FD.TYPE_DOUBLE:
        return rand_double(rng)
    if t == FD.TYPE_FLOAT:
        return rand_float(rng)
    if t == FD.TYPE_BOOL:
        return rng.random() < 0.6
    if t == FD.TYPE_STRING:
        return rand_string(rng)
    if t == FD.TYPE_BYTES:
        return rand_bytes(rng)
    if t == FD.TYPE_ENUM:
        known = [v.number for v in fd.enum_type.values]
        if fd.enum_type.is_closed or rng.random() < 0.8:
            return rng.choice(known)
        return rng.choice([3, 7, 100, -1, -2**31, 2**31 - 1])  # open enum: unknown values kept
    name = {FD.TYPE_INT32: "int32", FD.TYPE_INT64: "int64", FD.TYPE_UINT32: "uint32",
            FD.TYPE_UINT64: "uint64", FD.TYPE_SINT32: "sint32", FD.TYPE_SINT64: "sint64",
            FD.TYPE_FIXED32: "fixed32", FD.TYPE_FIXED64: "fixed64", FD.TYPE_SFIXED32: "sfixed32",
            FD.TYPE_SFIXED64: "sfixed64"}[t]
    return rand_int(rng, name)


def field_bytes(cls, fd, value):
    """The canonical bytes of one occurrence of singular scalar field fd = value."""
    m = cls()
    setattr(m, fd.name, value)
    b = m.SerializePartialToString()
    if not b:
        return join([explicit_default_tok(fd)])
    return b


def nonzero_value(rng, fd):
    for _ in range(100):
        v = rand_value(rng, fd)
        if v or (isinstance(v, float) and math.copysign(1, v) < 0) or (isinstance(v, float) and math.isnan(v)):
            return v
    raise AssertionError(fd.name)


# ---------------------------------------------------------------------------------------------------
# Shapes: random messages.

SCALAR_NAMES = ["f_double", "f_float", "f_int32", "f_int64", "f_uint32", "f_uint64", "f_sint32",
                "f_sint64", "f_fixed32", "f_fixed64", "f_sfixed32", "f_sfixed64", "f_bool", "f_string",
                "f_bytes"]
REPEATED_NAMES = ["r_int32", "r_int64", "r_double", "r_float", "r_bool", "r_string", "r_bytes",
                  "r_sint64", "r_fixed32"]
MAP_NAMES = ["m_str_int", "m_int64_str", "m_bool_inner", "m_uint32_color"]


def fill_inner(rng, inner, depth):
    """Shapes.Inner at nesting depth `depth` (1 = a direct field of Shapes); children to depth 3."""
    d = inner.DESCRIPTOR
    if rng.random() < 0.6:
        inner.a = rand_int(rng, "int32")
    if rng.random() < 0.6:
        inner.b = rand_string(rng)
    if depth < 3 and rng.random() < 0.5:
        for _ in range(rng.randint(1, 2)):
            fill_inner(rng, inner.children.add(), depth + 1)
    assert d.full_name == "rwtest.Shapes.Inner"


def gen_shapes(rng, S):
    m = S()
    d = S.DESCRIPTOR
    for name in SCALAR_NAMES:
        if rng.random() < 0.5:
            setattr(m, name, rand_value(rng, d.fields_by_name[name]))
    if rng.random() < 0.4:
        m.opt_int32 = rng.choice([0, rand_int(rng, "int32")])
    if rng.random() < 0.4:
        m.opt_string = rng.choice(["", rand_string(rng)])
    for name in REPEATED_NAMES:
        if rng.random() < 0.5:
            fd = d.fields_by_name[name]
            getattr(m, name).extend(rand_value(rng, fd) for _ in range(rng.randint(0, 5)))
    if rng.random() < 0.4:
        fill_inner(rng, m.inner, 1)
        m.inner.SetInParent()
    if rng.random() < 0.4:
        for _ in range(rng.randint(0, 3)):
            fill_inner(rng, m.inners.add(), 1)
    if rng.random() < 0.5:
        m.color = rand_value(rng, d.fields_by_name["color"])
    if rng.random() < 0.4:
        m.colors.extend(rand_value(rng, d.fields_by_name["colors"]) for _ in range(rng.randint(0, 5)))
    which = rng.choice([None, "pick_int", "pick_text", "pick_inner"])
    if which == "pick_int":
        m.pick_int = rand_int(rng, "int32")
    elif which == "pick_text":
        m.pick_text = rand_string(rng)
    elif which == "pick_inner":
        m.pick_inner.SetInParent()
        fill_inner(rng, m.pick_inner, 1)
    if rng.random() < 0.4:
        for _ in range(rng.randint(0, 4)):
            m.m_str_int[rand_string(rng)] = rand_int(rng, "int32")
    if rng.random() < 0.4:
        for _ in range(rng.randint(0, 4)):
            m.m_int64_str[rand_int(rng, "int64")] = rand_string(rng)
    if rng.random() < 0.4:
        for _ in range(rng.randint(0, 2)):
            fill_inner(rng, m.m_bool_inner[rng.random() < 0.5], 1)
    if rng.random() < 0.4:
        fd = d.fields_by_name["m_uint32_color"].message_type.fields_by_name["value"]
        for _ in range(rng.randint(0, 4)):
            m.m_uint32_color[rand_int(rng, "uint32")] = rand_value(rng, fd)
    return m


def special_shapes(S):
    """The first records: fixed, hand-picked contents."""
    out = []
    out.append(("empty", S()))

    m = S()  # explicit presence with zero values, empty containers' elements
    m.opt_int32 = 0
    m.opt_string = ""
    m.pick_int = 0
    m.inner.SetInParent()
    m.inners.add()
    m.m_str_int[""] = 0
    m.m_bool_inner[False].SetInParent()
    m.m_int64_str[0] = ""
    m.m_uint32_color[0] = 0
    m.colors.append(0)
    m.r_bool.append(False)
    m.r_string.append("")
    m.r_bytes.append(b"")
    m.r_int32.append(0)
    m.r_double.append(0.0)
    out.append(("zeros", m))

    m = S()  # maxima
    m.f_double = 1.7976931348623157e308
    m.f_float = F32_MAX
    m.f_int32, m.f_int64 = 2**31 - 1, 2**63 - 1
    m.f_uint32, m.f_uint64 = 2**32 - 1, 2**64 - 1
    m.f_sint32, m.f_sint64 = 2**31 - 1, 2**63 - 1
    m.f_fixed32, m.f_fixed64 = 2**32 - 1, 2**64 - 1
    m.f_sfixed32, m.f_sfixed64 = 2**31 - 1, 2**63 - 1
    m.f_bool = True
    m.f_string = "größe 日本語 😀 \U0010ffff"
    m.f_bytes = bytes(range(256))
    m.opt_int32 = 2**31 - 1
    m.opt_string = "\u2028"
    m.r_int32.extend([2**31 - 1, 0, 2**31 - 1])
    m.r_int64.extend([2**63 - 1, 2**53 + 1])
    m.r_sint64.extend([2**63 - 1, 1])
    m.r_fixed32.extend([2**32 - 1, 0])
    m.pick_text = "pick"
    m.m_int64_str[2**63 - 1] = "max"
    m.m_uint32_color[2**32 - 1] = 2
    m.m_bool_inner[True].a = 2**31 - 1
    out.append(("maxima", m))

    m = S()  # minima
    m.f_double = -1.7976931348623157e308
    m.f_float = -F32_MAX
    m.f_int32, m.f_int64 = -2**31, -2**63
    m.f_sint32, m.f_sint64 = -2**31, -2**63
    m.f_sfixed32, m.f_sfixed64 = -2**31, -2**63
    m.opt_int32 = -2**31
    m.r_int32.extend([-2**31, -1])
    m.r_int64.extend([-2**63, -1])
    m.r_sint64.extend([-2**63, -1, 0])
    m.pick_int = -1
    m.m_int64_str[-2**63] = "min"
    m.m_int64_str[-1] = "minus one"
    m.m_str_int["min"] = -2**31
    out.append(("minima", m))

    m = S()  # special floating-point values
    m.f_double = math.nan
    m.f_float = -math.inf
    m.r_double.extend([math.nan, math.inf, -math.inf, -0.0, 5e-324, 2.2250738585072014e-308, 0.1, 1 / 3,
                       1e16, 1e-5, 1e-7, 1e22, 123456789.125])
    m.r_float.extend([math.nan, math.inf, -math.inf, -0.0, F32_MIN_DENORMAL, 3 * F32_MIN_DENORMAL, F32_MAX,
                      F32_MIN_NORMAL, 0.1, 1 / 3, 16777217.0, 1e-7, 65504.0, 1e10, 3.1415927])
    out.append(("floats", m))

    m = S()  # -0.0 alone: a proto3 implicit-presence double equal to zero but with the sign bit
    m.f_double = -0.0
    m.f_float = -0.0
    out.append(("negative_zero", m))

    m = S()  # enum values the schema does not name (proto3 enums are open)
    m.color = 7
    m.colors.extend([0, 1, 2, 3, -1, -2**31])
    m.m_uint32_color[0] = 5
    m.m_uint32_color[1] = 1
    m.m_uint32_color[4294967295] = -1
    out.append(("unknown_enum_values", m))

    m = S()  # nesting to depth 3 everywhere
    m.inner.a = 1
    c = m.inner.children.add()
    c.b = "depth 2"
    c.children.add().a = 3
    c.children.add()
    m.inners.add().children.add().children.add().b = "deep"
    m.pick_inner.children.add().children.add().a = -5
    m.m_bool_inner[True].children.add().children.add().a = 9
    out.append(("nested", m))
    return out


# ---------------------------------------------------------------------------------------------------
# Non-canonical rewrites of the wire bytes. Each takes (rng, cls, canonical bytes) and returns
# (new bytes, label) or None when it does not apply. cls is the message class.


def nc_unpacked(rng, cls, b):
    d = cls.DESCRIPTOR
    out, done = [], []
    for t in split_fields(b):
        fd = d.fields_by_number.get(t.fn)
        if fd is not None and packable(fd) and t.wt == LEN:
            out += unpacked_toks(fd, packed_elems(fd, t.payload))
            done.append(fd.name)
        else:
            out.append(t)
    if not done or not any(out):
        return None
    return join(out), "unpacked:" + ",".join(done)


def nc_packed(rng, cls, b):
    """For proto2's default-unpacked repeated fields: written packed instead."""
    d = cls.DESCRIPTOR
    toks = split_fields(b)
    by_fn = collections.OrderedDict()
    for t in toks:
        fd = d.fields_by_number.get(t.fn)
        if fd is not None and packable(fd) and t.wt != LEN:
            by_fn.setdefault(t.fn, []).append(t)
    if not by_fn:
        fd = next((f for f in d.fields if packable(f) and not f.is_packed), None)
        if fd is None:
            return None
        elems = [varint(rng.randint(-3, 300)) for _ in range(rng.randint(2, 4))]
        toks = insert_at_random(rng, toks, [packed_tok(fd, elems)])
        return join(toks), "packed:%s(added)" % fd.name
    out, seen = [], set()
    for t in toks:
        if t.fn in by_fn:
            if t.fn not in seen:
                seen.add(t.fn)
                fd = d.fields_by_number[t.fn]
                out.append(packed_tok(fd, [x.payload for x in by_fn[t.fn]]))
        else:
            out.append(t)
    return join(out), "packed:" + ",".join(d.fields_by_number[f].name for f in by_fn)


def nc_mixed_packed(rng, cls, b):
    """Elements of a repeated numeric field in several chunks, some packed, some not, an empty packed
    chunk, with other fields in between."""
    d = cls.DESCRIPTOR
    toks = split_fields(b)
    cand = [i for i, t in enumerate(toks)
            if d.fields_by_number.get(t.fn) is not None and packable(d.fields_by_number[t.fn])
            and t.wt == LEN and len(packed_elems(d.fields_by_number[t.fn], t.payload)) >= 2]
    if not cand:
        return None
    i = rng.choice(cand)
    fd = d.fields_by_number[toks[i].fn]
    elems = packed_elems(fd, toks[i].payload)
    chunks, rest = [], list(elems)
    while rest:
        k = rng.randint(1, len(rest))
        chunks.append(rest[:k])
        rest = rest[k:]
    if len(chunks) == 1:
        chunks = [elems[:1], elems[1:]]
    new = []
    for j, ch in enumerate(chunks):
        if j % 2 == 0:
            new += unpacked_toks(fd, ch)
        else:
            new.append(packed_tok(fd, ch))
    new.insert(rng.randint(0, len(new)), packed_tok(fd, []))  # an empty packed run adds nothing
    others = toks[:i] + toks[i + 1:]
    return join(insert_at_random(rng, others, new)), "mixed_packed:" + fd.name


SINGULAR_SCALARS_SHAPES = SCALAR_NAMES + ["opt_int32", "opt_string"]


def nc_dup_scalar(rng, cls, b, names=SINGULAR_SCALARS_SHAPES):
    """A singular scalar field written two or three times: the last occurrence wins. Sometimes the last
    one is the zero value (a proto3 field then ends up absent)."""
    d = cls.DESCRIPTOR
    toks = split_fields(b)
    chosen = rng.sample(names, rng.randint(1, 3))
    labels = []
    for name in chosen:
        fd = d.fields_by_name[name]
        first = split_fields(field_bytes(cls, fd, nonzero_value(rng, fd)))
        idx = [i for i, t in enumerate(toks) if t.fn == fd.number]
        if idx:  # present: an earlier occurrence with another value
            i = idx[0]
            toks[i:i] = first
            lab = name
            if rng.random() < 0.3:  # and a later explicit zero
                j = rng.randint(i + len(first) + 1, len(toks))
                toks[j:j] = [explicit_default_tok(fd)]
                lab += "(last=zero)"
        else:  # absent: two occurrences, the last one random or zero
            if rng.random() < 0.4:
                second = [explicit_default_tok(fd)]
                lab = name + "(last=zero)"
            else:
                second = split_fields(field_bytes(cls, fd, nonzero_value(rng, fd)))
                lab = name
            pos = rng.randint(0, len(toks))
            toks[pos:pos] = first
            j = rng.randint(pos + len(first), len(toks))
            toks[j:j] = second
        labels.append(lab)
    return join(toks), "dup_scalar:" + ",".join(labels)


def nc_split_message(rng, cls, b, fields=("inner", "pick_inner")):
    """A singular message field in several occurrences: they merge (scalars: last wins, repeated:
    concatenated)."""
    d = cls.DESCRIPTOR
    toks = split_fields(b)
    labels = []
    for name in fields:
        fd = d.fields_by_name[name]
        idx = [i for i, t in enumerate(toks) if t.fn == fd.number]
        if not idx:
            continue
        i = idx[0]
        sub = split_fields(toks[i].payload)
        pieces = []
        if len(sub) >= 2:
            k = rng.randint(1, len(sub) - 1)
            pieces = [join(sub[:k]), join(sub[k:])]
        else:
            pieces = [b"", join(sub)]  # an empty occurrence first
        if rng.random() < 0.5:  # an earlier value of `a` that a later occurrence may override
            pieces.insert(0, tag(1, VARINT) + varint(rng.randint(1, 99)))
        new = [Tok(fd.number, LEN, ld(fd.number, p), p) for p in pieces]
        others = toks[:i] + toks[i + 1:]
        toks = insert_at_random(rng, others[:i], new[:1]) + others[i:]
        last = max(j for j, t in enumerate(toks) if t.fn == fd.number)
        toks = toks[:last + 1] + insert_at_random(rng, toks[last + 1:], new[1:])
        labels.append("%s*%d" % (name, len(pieces)))
    if not labels:
        fd = d.fields_by_name["inner"]
        p1 = tag(1, VARINT) + varint(5) + ld(3, tag(2, LEN) + varint(1) + b"c")
        p2 = ld(2, "two".encode()) + ld(3, tag(1, VARINT) + varint(6))
        new = [Tok(fd.number, LEN, ld(fd.number, p1), p1), Tok(fd.number, LEN, ld(fd.number, p2), p2)]
        toks = insert_at_random(rng, toks, new)
        labels.append("inner*2(new)")
    return join(toks), "split_message:" + ",".join(labels)


def nc_reordered(rng, cls, b):
    toks = split_fields(b)
    if len({t.fn for t in toks}) < 2:
        return None
    for _ in range(20):
        new = interleave_by_field(rng, toks)
        if join(new) != b:
            return join(new), "reordered"
    return None


def unknown_pool(rng):
    return [
        ("999:varint", tag(999, VARINT) + varint(rng.choice([0, 1, 300, M64]))),
        ("999:len", ld(999, b"unknown \xff bytes")),
        ("1000:i32", tag(1000, I32) + struct.pack("<I", rng.getrandbits(32))),
        ("1001:i64", tag(1001, I64) + struct.pack("<Q", rng.getrandbits(64))),
        ("1002:group", tag(1002, SGROUP) + tag(1, VARINT) + varint(7) + ld(2, b"in group")
         + tag(3, SGROUP) + tag(4, I32) + b"\x01\x02\x03\x04" + tag(3, EGROUP) + tag(1002, EGROUP)),
        ("536870911:varint", tag(536870911, VARINT) + varint(1)),  # the largest field number
        ("19:varint", tag(19, VARINT) + varint(19)),  # a number in a gap of the schema
        ("999:len_empty", ld(999, b"")),
    ]


def nc_unknown(rng, cls, b, nested=("inner", "pick_inner")):
    toks = split_fields(b)
    pool = unknown_pool(rng)
    chosen = rng.sample(pool, rng.randint(2, 4))
    labels = [c[0] for c in chosen]
    new = [split_fields(c[1])[0] for c in chosen]
    toks = insert_at_random(rng, toks, rng.sample(new, len(new)))
    d = cls.DESCRIPTOR
    for name in nested:  # unknown fields inside a nested message too
        fd = d.fields_by_name.get(name)
        if fd is None:
            continue
        for i, t in enumerate(toks):
            if t.fn == fd.number and t.wt == LEN and rng.random() < 0.7:
                c = rng.choice(unknown_pool(rng))
                p = join(insert_at_random(rng, split_fields(t.payload), split_fields(c[1])))
                toks[i] = Tok(t.fn, LEN, ld(t.fn, p), p)
                labels.append(name + "." + c[0])
                break
    return join(toks), "unknown:" + ",".join(labels)


WRONG_WT_SHAPES = [  # (field, wrong wire type, payload) : known numbers, wrong wire types
    ("f_int32", I32, b"\x05\x00\x00\x00"),
    ("f_double", VARINT, varint(1)),
    ("f_float", I64, struct.pack("<d", 1.5)),
    ("f_string", VARINT, varint(65)),
    ("f_bytes", SGROUP, None),
    ("inner", I64, struct.pack("<q", -1)),
    ("r_string", VARINT, varint(3)),
    ("r_int32", I32, b"\x07\x00\x00\x00"),
    ("r_fixed32", VARINT, varint(8)),
    ("f_bool", LEN, varint(1)),  # LEN on a singular scalar is not "packed": unknown
    ("color", I32, b"\x01\x00\x00\x00"),
    ("m_str_int", VARINT, varint(1)),
    ("pick_int", I64, b"\x09" + b"\x00" * 7),
]


def wrong_tok(fn, wt, payload):
    if wt == SGROUP:
        raw = tag(fn, SGROUP) + tag(1, VARINT) + varint(2) + tag(fn, EGROUP)
    elif wt == LEN:
        raw = ld(fn, payload)
    else:
        raw = tag(fn, wt) + payload
    return split_fields(raw)[0]


def nc_wrong_wire_type(rng, cls, b, table=WRONG_WT_SHAPES):
    d = cls.DESCRIPTOR
    toks = split_fields(b)
    chosen = rng.sample(table, rng.randint(1, 3))
    new = [wrong_tok(d.fields_by_name[n].number, wt, p) for n, wt, p in chosen]
    toks = insert_at_random(rng, toks, new)
    return join(toks), "wrong_wire_type:" + ",".join("%s/wt%d" % (n, wt) for n, wt, _ in chosen)


def map_entry(key_bytes, value_bytes):
    return key_bytes + value_bytes


def rand_map_kv(rng, cls, name):
    """(key bytes, value bytes) of a random entry of map field `name`, as field 1 and field 2."""
    d = cls.DESCRIPTOR
    fd = d.fields_by_name[name]
    kfd = fd.message_type.fields_by_name["key"]
    vfd = fd.message_type.fields_by_name["value"]
    m = cls()
    if name == "m_bool_inner":
        k = rng.random() < 0.5
        fill_inner(rng, getattr(m, name)[k], 1)
        getattr(m, name)[k].a = rng.randint(1, 1000)  # never empty
    else:
        getattr(m, name)[rand_value(rng, kfd)] = nonzero_value(rng, vfd)
    entry = split_fields(m.SerializePartialToString())[0].payload
    parts = split_fields(entry)
    kb = join([t for t in parts if t.fn == 1])
    vb = join([t for t in parts if t.fn == 2])
    return kb, vb


def nc_map_dup_key(rng, cls, b):
    """A map key twice: the last entry wins (its whole value, no merge for message values)."""
    d = cls.DESCRIPTOR
    toks = split_fields(b)
    labels = []
    present = [n for n in MAP_NAMES if any(t.fn == d.fields_by_name[n].number for t in toks)]
    names = rng.sample(present, min(len(present), rng.randint(1, 2))) if present else [rng.choice(MAP_NAMES)]
    for name in names:
        fn = d.fields_by_name[name].number
        idx = [i for i, t in enumerate(toks) if t.fn == fn]
        if idx:
            i = rng.choice(idx)
            kb = join([t for t in split_fields(toks[i].payload) if t.fn == 1])
        else:
            kb, vb0 = rand_map_kv(rng, cls, name)
            p = map_entry(kb, vb0)
            i = rng.randint(0, len(toks))
            toks.insert(i, Tok(fn, LEN, ld(fn, p), p))
        _, vb = rand_map_kv(rng, cls, name)
        p = map_entry(kb, vb)
        j = rng.randint(i + 1, len(toks))
        toks.insert(j, Tok(fn, LEN, ld(fn, p), p))
        labels.append(name)
    return join(toks), "map_dup_key:" + ",".join(labels)


def nc_map_entry_odd(rng, cls, b):
    """Map entries written unusually: value before key, key missing (default key), value missing
    (default value), the key twice inside one entry (the last one counts)."""
    d = cls.DESCRIPTOR
    toks = split_fields(b)
    # Not here: an entry holding an unknown field. The pure-Python runtime keeps the entry (and drops the
    # unknown field); upb moves the whole entry to the parent's unknown fields (see README).
    kinds = rng.sample(["value_first", "no_key", "no_value", "key_twice"], rng.randint(1, 3))
    new, labels = [], []
    for kind in kinds:
        name = rng.choice(MAP_NAMES)
        fn = d.fields_by_name[name].number
        kb, vb = rand_map_kv(rng, cls, name)
        if kind == "value_first":
            p = vb + kb
        elif kind == "no_key":
            p = vb
        elif kind == "no_value":
            p = kb
        else:
            kb2, _ = rand_map_kv(rng, cls, name)
            p = kb2 + vb + kb  # key, value, key: the last key counts
        new.append(Tok(fn, LEN, ld(fn, p), p))
        labels.append("%s(%s)" % (kind, name))
    toks = insert_at_random(rng, toks, new)
    return join(toks), "map_entry_odd:" + ",".join(labels)


def nc_oneof_two(rng, cls, b):
    """Several members of oneof `choice` on the wire: the last one wins; two pick_inner in a row merge,
    but not across another member."""
    d = cls.DESCRIPTOR
    fns = {d.fields_by_name[n].number for n in ("pick_int", "pick_text", "pick_inner")}
    toks = [t for t in split_fields(b) if t.fn not in fns]
    int_t = lambda v: split_fields(tag(50, VARINT) + varint(v))[0]  # noqa: E731
    text_t = lambda s: split_fields(ld(51, s.encode()))[0]  # noqa: E731
    inner_t = lambda p: split_fields(ld(52, p))[0]  # noqa: E731
    variant = rng.choice(["int,text", "text,int", "text,inner", "inner,int", "inner+inner", "inner,int,inner",
                          "int,int", "text,int0"])
    seq = {
        "int,text": [int_t(rng.randint(-5, 5)), text_t(rand_string(rng))],
        "text,int": [text_t(rand_string(rng)), int_t(rand_int(rng, "int32"))],
        "text,inner": [text_t("gone"), inner_t(tag(1, VARINT) + varint(11))],
        "inner,int": [inner_t(ld(2, b"gone")), int_t(-1)],
        "inner+inner": [inner_t(tag(1, VARINT) + varint(1) + ld(3, b"")), inner_t(ld(2, b"merged") + ld(3, b""))],
        "inner,int,inner": [inner_t(tag(1, VARINT) + varint(1)), int_t(2), inner_t(ld(2, b"fresh"))],
        "int,int": [int_t(1), int_t(2)],
        "text,int0": [text_t("gone"), int_t(0)],  # a oneof member set to zero is still present
    }[variant]
    return join(insert_at_random(rng, toks, seq)), "oneof_two:" + variant


def nc_overlong(rng, cls, b):
    """Varint values and lengths with redundant continuation bytes (valid up to 10 bytes). Tags stay
    minimal: the pure-Python runtime does not decode an overlong tag (see README)."""
    toks = split_fields(b)
    cand = [i for i, t in enumerate(toks) if t.wt in (VARINT, LEN) and len(t.payload) < 10]
    if not cand:
        return None
    labels = []
    for i in rng.sample(cand, min(len(cand), rng.randint(1, 3))):
        t = toks[i]
        key = t.raw[:len(tag(t.fn, t.wt))]
        if t.wt == VARINT:
            v, _ = read_varint(t.payload, 0)
            n = rng.randint(len(varint(v)) + 1, 10)
            raw = key + overlong_varint(v, n)
            labels.append("%d:value%d" % (t.fn, n))
        else:
            n = rng.randint(len(varint(len(t.payload))) + 1, 5)
            raw = key + overlong_varint(len(t.payload), n) + t.payload
            labels.append("%d:len%d" % (t.fn, n))
        toks[i] = split_fields(raw)[0]
    return join(toks), "overlong_varint:" + ",".join(labels)


def nc_varint_range(rng, cls, b):
    """Varints wider than the field: int32/uint32/sint32/enum keep the low 32 bits, bool is any
    non-zero value; an int32 written as a 5-byte (not sign-extended) varint."""
    toks = split_fields(b)
    pool = [
        ("int32=2^32+5", tag(3, VARINT) + varint(2**32 + 5)),
        ("int32=0xffffffff(5 bytes)", tag(3, VARINT) + varint(0xFFFFFFFF)),
        ("int32=2^63", tag(3, VARINT) + varint(2**63)),
        ("uint32=2^40+7", tag(5, VARINT) + varint(2**40 + 7)),
        ("sint32=2^33+3", tag(7, VARINT) + varint(2**33 + 3)),
        ("bool=2", tag(13, VARINT) + varint(2)),
        ("bool=2^40", tag(13, VARINT) + varint(2**40)),
        ("color=2^32+1", tag(40, VARINT) + varint(2**32 + 1)),
        ("r_int32+=2^35-1", tag(20, VARINT) + varint(2**35 - 1)),
        ("r_bool+=[3,0,128]", ld(24, varint(3) + varint(0) + varint(128))),
    ]
    chosen = rng.sample(pool, rng.randint(1, 3))
    toks = insert_at_random(rng, toks, [split_fields(c[1])[0] for c in chosen])
    return join(toks), "varint_range:" + ",".join(c[0] for c in chosen)


SHAPES_NC = [nc_unpacked, nc_mixed_packed, nc_dup_scalar, nc_split_message, nc_reordered, nc_unknown,
             nc_wrong_wire_type, nc_map_dup_key, nc_map_entry_odd, nc_oneof_two, nc_overlong, nc_varint_range]


# ---------------------------------------------------------------------------------------------------
# Legacy (proto2).


def gen_legacy(rng, L):
    m = L()
    d = L.DESCRIPTOR
    m.name = rand_string(rng)
    if rng.random() < 0.5:
        m.with_default = rng.choice([42, 0, rand_int(rng, "int32")])
    if rng.random() < 0.5:
        m.kind = rng.choice([1, 2])
    if rng.random() < 0.5:
        m.unpacked.extend(rand_int(rng, "int32") for _ in range(rng.randint(0, 5)))
    if rng.random() < 0.5:
        m.packed_ints.extend(rand_int(rng, "int32") for _ in range(rng.randint(0, 5)))
    if rng.random() < 0.5:
        m.blob = rand_bytes(rng)
    if rng.random() < 0.5:
        m.grp.SetInParent()
        if rng.random() < 0.7:
            m.grp.g = rand_int(rng, "int32")
    assert d.fields_by_name["grp"].type == FD.TYPE_GROUP
    return m


def special_legacy(L):
    out = []
    out.append(("name_only_empty", L(name="")))
    m = L(name="defaults", with_default=42, kind=1, blob=b"")
    m.grp.SetInParent()
    out.append(("explicit_defaults", m))
    m = L(name="größe 😀", with_default=-2**31, kind=2, blob=bytes(range(256)))
    m.unpacked.extend([0, -1, 2**31 - 1, -2**31, 300])
    m.packed_ints.extend([0, -1, 2**31 - 1, -2**31, 300])
    m.grp.g = -1
    out.append(("extremes", m))
    m = L(name="zero_default", with_default=0)
    m.grp.g = 0
    out.append(("zero_values", m))
    return out


def nc_legacy_split_group(rng, cls, b):
    """The group in several occurrences (they merge: last g wins), one possibly empty or holding an
    unknown field."""
    toks = split_fields(b)
    idx = [i for i, t in enumerate(toks) if t.fn == 7]
    g = lambda p: split_fields(tag(7, SGROUP) + p + tag(7, EGROUP))[0]  # noqa: E731
    variant = rng.choice(["g,g", "empty,g", "g,empty", "g,unknown"])
    a = tag(8, VARINT) + varint(rand_int(rng, "int32"))
    bb = tag(8, VARINT) + varint(rand_int(rng, "int32"))
    seq = {"g,g": [g(a), g(bb)], "empty,g": [g(b""), g(bb)], "g,empty": [g(a), g(b"")],
           "g,unknown": [g(a), g(tag(9, VARINT) + varint(9) + ld(10, b"u"))]}[variant]
    others = [t for t in toks if t.fn != 7]
    pos = idx[0] if idx else rng.randint(0, len(others))
    new = insert_at_random(rng, others[:pos], seq[:1]) + others[pos:]
    last = max(j for j, t in enumerate(new) if t.fn == 7)
    new = new[:last + 1] + insert_at_random(rng, new[last + 1:], seq[1:])
    return join(new), "split_group:" + variant


def nc_legacy_closed_enum(rng, cls, b):
    """Values of the closed enum Kind that it does not name: parsed as unknown fields (kept in the
    re-serialization, after the known fields); the last *known* value is the field's value."""
    toks = split_fields(b)
    vals = rng.choice([[7], [0], [1, 7], [2, -1], [7, 1, 0], [3, 2, 5]])
    new = [split_fields(tag(3, VARINT) + varint(v))[0] for v in vals]
    others = [t for t in toks if t.fn != 3]
    pos = rng.randint(0, len(others))
    out = others[:pos] + new + others[pos:]
    return join(out), "closed_enum_unknown:" + ",".join(map(str, vals))


def nc_legacy_missing_required(rng, cls, b):
    toks = [t for t in split_fields(b) if t.fn != 2]
    return join(toks), "missing_required:name"


WRONG_WT_LEGACY = [
    ("grp", LEN, tag(8, VARINT) + varint(1)),  # a group's number written as LEN: unknown
    ("name", VARINT, varint(1)),
    ("unpacked", I32, b"\x01\x00\x00\x00"),
    ("packed_ints", I64, b"\x01" + b"\x00" * 7),
    ("with_default", LEN, varint(5)),
    ("kind", I32, b"\x01\x00\x00\x00"),
    ("blob", VARINT, varint(0)),
]


def nc_legacy_wrong_wt(rng, cls, b):
    return nc_wrong_wire_type(rng, cls, b, WRONG_WT_LEGACY)


def nc_legacy_dup(rng, cls, b):
    return nc_dup_scalar(rng, cls, b, ["with_default", "name", "kind", "blob"])


def nc_legacy_unknown(rng, cls, b):
    return nc_unknown(rng, cls, b, nested=())


LEGACY_NC = [nc_packed, nc_unpacked, nc_legacy_dup, nc_legacy_split_group, nc_legacy_closed_enum,
             nc_legacy_unknown, nc_legacy_wrong_wt, nc_reordered, nc_overlong, nc_legacy_missing_required]


# ---------------------------------------------------------------------------------------------------
# Wkt (proto3): Google's well-known types, which the JSON mapping prints in special forms.

TYPE_URL_PREFIX = "type.googleapis.com/"
TS_MIN = -62135596800  # 0001-01-01T00:00:00Z
TS_MAX = 253402300799  # 9999-12-31T23:59:59Z
DUR_MAX = 315576000000  # 10,000 years: the Duration range is +-315576000000.999999999 s
TS_SECONDS_EDGES = [0, -1, 1, TS_MIN, TS_MAX, 951782400, 1709164800, -2208988800, 2**31 - 1, 2**31,
                    -2**31, 946684799, 4102444800, 86399, -86400]
DUR_SECONDS_EDGES = [0, 1, 59, 60, 3600, 86400, DUR_MAX, 2**31, 10**9]
NUMBER_EDGES = [0.0, -0.0, 3.0, -1.0, 1.0, 1e300, -1e300, 5e-324, 0.1, 1 / 3, 1e16, 1e22, 2.0**53,
                2.0**53 + 2, float(2**53 + 1), -2.5, 123456789.125, 1e-7, 1.7976931348623157e308, 1e21, 1e-5]
STRUCT_KEYS = ["", "a", "fooBar", "foo_bar", "größe", "k1", "nested", "x y", "@type", "value", "null", "日本"]
MASK_WORDS = ["foo", "bar", "baz", "qux", "a", "b", "x", "id", "name", "v2", "user", "field", "n1x"]
WRAPPERS = ["w_double", "w_float", "w_int64", "w_uint64", "w_int32", "w_uint32", "w_bool", "w_string", "w_bytes"]


def wkt_class(cls, full_name):
    """A message class of the same pool as cls (the one made from wkt.pb)."""
    return message_factory.GetMessageClass(cls.DESCRIPTOR.file.pool.FindMessageTypeByName(full_name))


def pack_any(a, sub):
    """Any.Pack with the prefix type.googleapis.com/ and the sub-message's deterministic bytes."""
    a.type_url = TYPE_URL_PREFIX + sub.DESCRIPTOR.full_name
    a.value = sub.SerializeToString(deterministic=True)


def rand_nanos(rng):
    """0, or a value with millisecond, microsecond or nanosecond precision (3, 6 or 9 digits)."""
    p = rng.choice(["0", "ms", "us", "ns", "ns"])
    if p == "0":
        return 0
    if p == "ms":
        return rng.choice([1, 500, 999, rng.randint(1, 999)]) * 10**6
    if p == "us":
        return rng.choice([1, 999999, rng.randint(1, 999999)]) * 10**3
    return rng.choice([1, 999999999, rng.randint(1, 999999999)])


def fill_timestamp(rng, t):
    x = rng.random()
    if x < 0.4:
        s = rng.choice(TS_SECONDS_EDGES)
    elif x < 0.7:
        s = rng.randint(-10**6, 10**6)  # around the epoch, negative too
    else:
        s = rng.randint(TS_MIN, TS_MAX)
    t.seconds = s
    t.nanos = rand_nanos(rng)


def fill_duration(rng, d):
    x = rng.random()
    if x < 0.1:  # "-0.5s" style: no whole seconds, negative nanos
        d.seconds, d.nanos = 0, -rng.choice([500000000, 1, 1000, 1000000, rng.randint(1, 999999999)])
        return
    if x < 0.5:
        s = rng.choice(DUR_SECONDS_EDGES)
    elif x < 0.8:
        s = rng.randint(0, 10**6)
    else:
        s = rng.randint(0, DUR_MAX)
    n = rand_nanos(rng)
    if rng.random() < 0.5:  # negative: both parts carry the sign
        s, n = -s, -n
    d.seconds, d.nanos = s, n


def rand_number(rng):
    """A finite double for Value.number_value (NaN and infinities make MessageToDict raise)."""
    x = rng.random()
    if x < 0.4:
        return rng.choice(NUMBER_EDGES)
    if x < 0.6:
        return float(rng.randint(-1000, 1000))  # integral: printed as 3.0 by Python
    if x < 0.8:
        return rng.uniform(-1e6, 1e6)
    while True:
        d = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(d):
            return d


def rand_key(rng):
    return rng.choice(STRUCT_KEYS) if rng.random() < 0.6 else rand_string(rng)


def fill_value(rng, v, depth):
    """v (a google.protobuf.Value) gets a random kind; depth counts Struct/ListValue levels (to 3)."""
    kinds = ["null", "number", "number", "string", "bool"] + (["struct", "list"] if depth < 3 else [])
    k = "unset" if rng.random() < 0.04 else rng.choice(kinds)
    if k == "null":
        v.null_value = 0
    elif k == "number":
        v.number_value = rand_number(rng)
    elif k == "string":
        v.string_value = rand_string(rng)
    elif k == "bool":
        v.bool_value = rng.random() < 0.5
    elif k == "struct":
        v.struct_value.SetInParent()
        fill_struct(rng, v.struct_value, depth + 1)
    elif k == "list":
        v.list_value.SetInParent()
        fill_list(rng, v.list_value, depth + 1)


def fill_struct(rng, s, depth):
    for _ in range(rng.randint(0, 4)):
        key = rand_key(rng)
        if key not in s.fields:
            fill_value(rng, s.fields[key], depth)


def fill_list(rng, lst, depth):
    for _ in range(rng.randint(0, 4)):
        fill_value(rng, lst.values.add(), depth)


def rand_mask_path(rng):
    """A FieldMask path whose lowerCamelCase form converts back to it (every '_' followed by a
    lowercase letter, no uppercase)."""
    return ".".join("_".join(rng.choice(MASK_WORDS) for _ in range(rng.randint(1, 3)))
                    for _ in range(rng.randint(1, 3)))


def check_mask(fm):
    """The FieldMask's JSON string converts back to the same paths."""
    back = type(fm)()
    back.FromJsonString(fm.ToJsonString())
    assert list(back.paths) == list(fm.paths), list(fm.paths)


def fill_any(rng, W, a, depth):
    """a (an Any) holds a random message: Note, one of the well-known types, or (once) another Any."""
    kinds = ["note", "note", "duration", "int32", "timestamp", "struct", "value", "list", "mask", "empty",
             "string", "int64", "double", "none", "note_empty"] + (["any"] if depth < 2 else [])
    k = rng.choice(kinds)
    if k == "none":  # an Any with no field set prints {}
        a.SetInParent()
        return
    if k == "note_empty":  # type_url only, no value bytes
        a.type_url = TYPE_URL_PREFIX + "rwtest.Wkt.Note"
        return
    if k in ("note",):
        sub = wkt_class(W, "rwtest.Wkt.Note")()
        if rng.random() < 0.7:
            sub.text = rand_string(rng)
        if rng.random() < 0.7:
            sub.n = rand_int(rng, "int64")
    elif k == "duration":
        sub = wkt_class(W, "google.protobuf.Duration")()
        fill_duration(rng, sub)
    elif k == "timestamp":
        sub = wkt_class(W, "google.protobuf.Timestamp")()
        fill_timestamp(rng, sub)
    elif k == "int32":
        sub = wkt_class(W, "google.protobuf.Int32Value")(value=rng.choice([0, rand_int(rng, "int32")]))
    elif k == "int64":
        sub = wkt_class(W, "google.protobuf.Int64Value")(value=rng.choice([0, rand_int(rng, "int64")]))
    elif k == "double":
        sub = wkt_class(W, "google.protobuf.DoubleValue")(value=rand_double(rng))
    elif k == "string":
        sub = wkt_class(W, "google.protobuf.StringValue")(value=rng.choice(["", rand_string(rng)]))
    elif k == "struct":
        sub = wkt_class(W, "google.protobuf.Struct")()
        fill_struct(rng, sub, 1)
    elif k == "value":
        sub = wkt_class(W, "google.protobuf.Value")()
        fill_value(rng, sub, 1)
    elif k == "list":
        sub = wkt_class(W, "google.protobuf.ListValue")()
        fill_list(rng, sub, 1)
    elif k == "mask":
        sub = wkt_class(W, "google.protobuf.FieldMask")()
        sub.paths.extend(rand_mask_path(rng) for _ in range(rng.randint(0, 3)))
        check_mask(sub)
    elif k == "empty":
        sub = wkt_class(W, "google.protobuf.Empty")()
    else:  # an Any inside the Any
        sub = wkt_class(W, "google.protobuf.Any")()
        fill_any(rng, W, sub, depth + 1)
    pack_any(a, sub)


def set_wrapper(rng, m, name):
    w = getattr(m, name)
    w.SetInParent()
    fd = w.DESCRIPTOR.fields_by_name["value"]
    if rng.random() < 0.3:
        return  # present, holding the default value (0, "", false): still printed
    w.value = rand_value(rng, fd)


def gen_wkt(rng, W):
    m = W()
    if rng.random() < 0.6:
        m.ts.SetInParent()
        fill_timestamp(rng, m.ts)
    if rng.random() < 0.6:
        m.dur.SetInParent()
        fill_duration(rng, m.dur)
    if rng.random() < 0.4:
        for _ in range(rng.randint(0, 3)):
            fill_timestamp(rng, m.tss.add())
    if rng.random() < 0.3:
        for _ in range(rng.randint(0, 3)):
            fill_duration(rng, m.durs.add())
    for name in WRAPPERS:
        if rng.random() < 0.4:
            set_wrapper(rng, m, name)
    if rng.random() < 0.3:
        for _ in range(rng.randint(0, 3)):
            w = m.w_int32s.add()
            if rng.random() < 0.6:
                w.value = rand_int(rng, "int32")
    if rng.random() < 0.5:
        m.st.SetInParent()
        fill_struct(rng, m.st, 1)
    if rng.random() < 0.5:
        m.val.SetInParent()
        fill_value(rng, m.val, 1)
    if rng.random() < 0.4:
        m.lst.SetInParent()
        fill_list(rng, m.lst, 1)
    if rng.random() < 0.4:
        m.mask.SetInParent()
        m.mask.paths.extend(rand_mask_path(rng) for _ in range(rng.randint(0, 3)))
        check_mask(m.mask)
    if rng.random() < 0.5:
        m.any.SetInParent()
        fill_any(rng, W, m.any, 1)
    if rng.random() < 0.3:
        for _ in range(rng.randint(0, 3)):
            fill_any(rng, W, m.anys.add(), 1)
    if rng.random() < 0.3:
        m.empty.SetInParent()
    if rng.random() < 0.4:
        for _ in range(rng.randint(0, 4)):
            key = rand_key(rng)
            if key not in m.vals:
                fill_value(rng, m.vals[key], 1)
    return m


def special_wkt(W):
    T = lambda s, n=0: wkt_class(W, "google.protobuf.Timestamp")(seconds=s, nanos=n)  # noqa: E731
    D = lambda s, n=0: wkt_class(W, "google.protobuf.Duration")(seconds=s, nanos=n)  # noqa: E731
    V = wkt_class(W, "google.protobuf.Value")
    Note = wkt_class(W, "rwtest.Wkt.Note")
    out = []
    out.append(("empty", W()))

    m = W()  # every message field present, holding its default (all-zero) contents
    for name in ["ts", "dur", "st", "val", "lst", "mask", "any", "empty"] + WRAPPERS:
        getattr(m, name).SetInParent()
    m.tss.add()
    m.durs.add()
    m.w_int32s.add()
    m.anys.add()
    m.vals[""].SetInParent()  # a map entry whose Value has no kind
    out.append(("present_defaults", m))

    m = W()  # timestamps: the extremes, around the epoch, each precision
    m.ts.CopyFrom(T(TS_MIN))
    m.tss.extend([T(TS_MAX, 999999999), T(0), T(-1), T(-1, 500000000), T(1, 1000000), T(1, 1000),
                  T(1, 1), T(0, 10**8), T(-62135596800, 1), T(951782400, 123456789), T(-86400, 999999),
                  T(1709164800, 120000000), T(TS_MAX), T(-2208988800, 50000)])
    out.append(("timestamps", m))

    m = W()  # durations: each precision, both signs, "-0.5s", the extremes
    m.dur.CopyFrom(D(0, -500000000))
    m.durs.extend([D(0), D(1, 500000000), D(-1, -500000000), D(0, 1), D(0, -1000), D(0, 10**6),
                   D(DUR_MAX, 999999999), D(-DUR_MAX, -999999999), D(1, 10000000), D(100), D(-60),
                   D(0, 999999999), D(3, 1000), D(-3, -1), D(86400, 50000000)])
    out.append(("durations", m))

    m = W()  # wrappers at their defaults (still printed: 0, "0", false, "")
    for name in WRAPPERS:
        getattr(m, name).SetInParent()
    m.w_int32s.add()
    m.w_int32s.add().value = 0
    out.append(("wrappers_default", m))

    m = W()  # wrappers at edge values
    m.w_double.value = math.nan
    m.w_float.value = math.inf
    m.w_int64.value = -2**63
    m.w_uint64.value = 2**64 - 1
    m.w_int32.value = -2**31
    m.w_uint32.value = 2**32 - 1
    m.w_bool.value = True
    m.w_string.value = "größe\t\"q\"\\ \x00 \u2028 😀"
    m.w_bytes.value = bytes(range(0, 256, 15))
    m.w_int32s.extend([wkt_class(W, "google.protobuf.Int32Value")(value=v) for v in [2**31 - 1, -1, 0]])
    out.append(("wrappers_edges", m))

    m = W()  # more wrapper edges: -0.0, tiny, huge, 2^53+1 as a string
    m.w_double.value = -0.0
    m.w_int64.value = 2**53 + 1
    m.w_uint64.value = 2**63
    m.w_int32.value = 2**31 - 1
    m.w_uint32.value = 1
    m.w_float.value = F32_MIN_DENORMAL
    m.w_string.value = "\U0010ffff"
    m.w_bytes.value = b"\xff"
    out.append(("wrappers_edges_2", m))

    m = W()  # Struct, Value of each kind, ListValue, the map of Values
    m.st.fields["null"].null_value = 0
    m.st.fields["num"].number_value = 3.0
    m.st.fields["str"].string_value = ""
    m.st.fields["bool"].bool_value = False
    deep = m.st.fields["nested"].struct_value.fields["deep"].struct_value
    deep.fields["list"].list_value.values.add().number_value = -0.0
    m.st.fields["empty_struct"].struct_value.SetInParent()
    m.st.fields["empty_list"].list_value.SetInParent()
    m.st.fields["unset"].SetInParent()  # a Value with no kind: printed as null
    m.val.number_value = 3.0  # integral: Python prints 3.0
    for v in [V(null_value=0), V(number_value=1e300), V(string_value="s"), V(bool_value=True), V(),
              V(number_value=float(2**53 + 1)), V(number_value=5e-324)]:
        m.lst.values.add().CopyFrom(v)
    m.lst.values.add().list_value.values.add().list_value.SetInParent()
    m.lst.values.add().struct_value.fields["k"].bool_value = True
    m.vals["null"].null_value = 0
    m.vals["number"].number_value = 0.0
    m.vals["string"].string_value = "x"
    m.vals["bool"].bool_value = False
    m.vals["struct"].struct_value.SetInParent()
    m.vals["list"].list_value.SetInParent()
    m.vals["unset"].SetInParent()
    out.append(("struct_values", m))

    m = W()  # val holding null_value; st and lst present but empty
    m.val.null_value = 0
    m.lst.SetInParent()
    m.st.SetInParent()
    out.append(("value_null", m))

    m = W()
    m.val.struct_value.fields["a"].list_value.values.add().null_value = 0
    out.append(("value_struct", m))

    m = W()  # FieldMask paths converted to lowerCamelCase
    m.mask.paths.extend(["foo_bar.baz_qux", "a", "a1_b2", "x.y.z", "user.display_name", "v2_x_y"])
    check_mask(m.mask)
    out.append(("field_mask", m))

    m = W()  # Any holding a message, the special forms, an empty Any, a nested Any
    pack_any(m.any, Note(text="hi", n=-5))
    subs = [
        wkt_class(W, "google.protobuf.Duration")(seconds=1, nanos=500000000),
        wkt_class(W, "google.protobuf.Int32Value")(value=0),
        wkt_class(W, "google.protobuf.Int32Value")(value=-7),
        T(TS_MAX, 999999999),
        wkt_class(W, "google.protobuf.FieldMask")(paths=["foo_bar", "x.y_z"]),
        wkt_class(W, "google.protobuf.Empty")(),
        V(number_value=3.0),
        V(null_value=0),
        wkt_class(W, "google.protobuf.Int64Value")(value=2**63 - 1),
        wkt_class(W, "google.protobuf.BytesValue")(value=b"\x00\xff"),
        wkt_class(W, "google.protobuf.DoubleValue")(value=math.nan),
        Note(),
    ]
    s = wkt_class(W, "google.protobuf.Struct")()
    s.fields["k"].string_value = "v"
    subs.append(s)
    inner = wkt_class(W, "google.protobuf.Any")()
    pack_any(inner, Note(text="inside"))
    subs.append(inner)
    for sub in subs:
        pack_any(m.anys.add(), sub)
    m.anys.add()  # no field set: {}
    m.anys.add().type_url = TYPE_URL_PREFIX + "rwtest.Wkt.Note"  # no value bytes
    m.empty.SetInParent()
    out.append(("anys", m))
    return out


def noncanonical_wkt():
    """Hand-made non-canonical Wkt payloads (after the specials): merges inside well-known types."""
    v = lambda fn, x: tag(fn, VARINT) + varint(x)  # noqa: E731
    note = lambda text, n: ld(1, text) + v(2, n)  # noqa: E731
    entry = lambda k, val: ld(1, ld(1, k) + ld(2, val))  # noqa: E731  (a Struct.fields entry)
    return [
        # ts in two occurrences with a field in between; the second writes no nanos (0): the first
        # occurrence's nanos stay, seconds -1 wins: 1969-12-31T23:59:59.123Z
        (ld(1, v(1, 86400) + v(2, 123000000)) + ld(11, ld(1, b"between")) + ld(1, v(1, -1)),
         "split_ts:earlier(nanos kept)"),
        # nanos alone, then seconds alone: 0001-01-01T00:00:00.000000999Z
        (ld(1, v(2, 999)) + ld(1, v(1, TS_MIN)), "split_ts:nanos|seconds"),
        # dur's nanos twice, the first of the other sign: -1.500s
        (ld(2, v(2, 7) + v(1, -1) + v(2, -500000000)), "dup_scalar:dur.nanos(first=+7)"),
        # dur's seconds twice, the last 0: -0.500s
        (ld(2, v(1, 5) + v(2, -500000000) + v(1, 0)), "dup_scalar:dur.seconds(last=zero)"),
        # val twice, both struct_value: the Values merge, so do their Structs (map: last entry wins)
        (ld(15, ld(5, entry(b"a", v(4, 1)) + entry(b"k", ld(3, b"old")))) +
         ld(15, ld(5, entry(b"b", v(1, 0)) + entry(b"k", ld(3, b"new")))), "split_message:val.struct_value*2"),
        # any twice: type_url and value are scalars (bytes), the second value replaces the first whole
        (ld(18, ld(1, TYPE_URL_PREFIX.encode() + b"rwtest.Wkt.Note") + ld(2, note(b"first", 1))) +
         ld(18, ld(2, v(2, 2))), "split_message:any*2(value replaced)"),
    ]


# Non-canonical rewrites for Wkt. Field numbers: ts 1, dur 2, val 15, st 14, any 18, the wrappers 4-12.

def _first(toks, fn):
    return next((i for i, t in enumerate(toks) if t.fn == fn and t.wt == LEN), None)


def _len_tok(fn, payload):
    return Tok(fn, LEN, ld(fn, payload), payload)


def nc_wkt_split_ts(rng, cls, b):
    """The singular Timestamp `ts` in two occurrences: they merge, field by field, the last wins.
    `earlier`: the first occurrence holds other seconds and nanos, overwritten only where the second
    occurrence writes the field (a zero nanos is not written: the earlier nanos then stays)."""
    toks = split_fields(b)
    i = _first(toks, 1)
    if i is None:
        return None
    inner = split_fields(toks[i].payload)
    if rng.random() < 0.5 and inner:
        variant = "seconds|nanos"
        a = [t for t in inner if t.fn == 1]
        c = [t for t in inner if t.fn != 1]
        first, second = join(a), join(c)
    else:
        variant = "earlier"
        t = wkt_class(cls, "google.protobuf.Timestamp")()
        fill_timestamp(rng, t)
        first, second = t.SerializeToString(), toks[i].payload
    new = toks[:i] + [_len_tok(1, first)]
    new += insert_at_random(rng, toks[i + 1:], [_len_tok(1, second)])
    return join(new), "split_ts:" + variant


def nc_wkt_dup_duration(rng, cls, b):
    """Inside `dur`, seconds or nanos written twice (the first with another value, possibly of the
    other sign): the last wins. A field the canonical bytes leave out (zero) is written as 0 after."""
    toks = split_fields(b)
    i = _first(toks, 2)
    if i is None:
        return None
    inner = split_fields(toks[i].payload)
    fn = rng.choice([1, 2])
    earlier = rng.choice([7, -7, 10**9 - 1, -1]) if fn == 2 else rng.choice([5, -5, DUR_MAX, -1])
    pre = split_fields(tag(fn, VARINT) + varint(earlier))
    if not any(t.fn == fn for t in inner):
        inner = inner + split_fields(tag(fn, VARINT) + varint(0))
        lab = "(last=zero)"
    else:
        lab = ""
    j = next(k for k, t in enumerate(inner) if t.fn == fn)
    p = join(inner[:j] + pre + inner[j:])
    toks[i] = _len_tok(2, p)
    return join(toks), "dup_scalar:dur.%s%s" % ("seconds" if fn == 1 else "nanos", lab)


def nc_wkt_value_oneof_two(rng, cls, b):
    """`val` with another kind of Value before its own: the last one wins (a Value with no kind takes
    the added one)."""
    toks = split_fields(b)
    i = _first(toks, 15)
    if i is None:
        return None
    inner = split_fields(toks[i].payload)
    own = {t.fn for t in inner}
    pool = [(1, "null", tag(1, VARINT) + varint(0)), (2, "number", tag(2, I64) + struct.pack("<d", 2.5)),
            (3, "string", ld(3, b"gone")), (4, "bool", tag(4, VARINT) + varint(1))]
    cand = [c for c in pool if c[0] not in own]
    fn, name, raw = rng.choice(cand)
    p = raw + toks[i].payload
    toks[i] = _len_tok(15, p)
    return join(toks), "oneof_two:val(%s first%s)" % (name, "" if own else ", no own kind")


def nc_wkt_struct_dup_key(rng, cls, b):
    """A key of `st` twice: the earlier entry holds another value, the last entry wins."""
    toks = split_fields(b)
    i = _first(toks, 14)
    if i is None:
        return None
    entries = split_fields(toks[i].payload)
    if not entries:
        return None
    j = rng.randrange(len(entries))
    key = next((t.payload for t in split_fields(entries[j].payload) if t.fn == 1), b"")
    old = split_fields(ld(1, ld(1, key) + ld(2, ld(3, b"old"))))
    p = join(entries[:j] + old + entries[j:])
    toks[i] = _len_tok(14, p)
    return join(toks), "map_dup_key:st"


def nc_wkt_wrapper_zero(rng, cls, b):
    """Present wrappers written with an explicit zero `value` first (what a serializer leaves out):
    the same message; a non-zero value after it wins."""
    d = cls.DESCRIPTOR
    toks = split_fields(b)
    idx = [k for k, t in enumerate(toks) if 4 <= t.fn <= 13 and t.wt == LEN]
    if not idx:
        return None
    labels = []
    for k in sorted(rng.sample(idx, min(len(idx), rng.randint(1, 3)))):
        t = toks[k]
        fd = d.fields_by_number[t.fn]
        vfd = fd.message_type.fields_by_name["value"]
        p = join([explicit_default_tok(vfd)]) + t.payload
        toks[k] = _len_tok(t.fn, p)
        labels.append(fd.name)
    return join(toks), "explicit_zero:" + ",".join(labels)


def nc_wkt_unknown_inside(rng, cls, b):
    """Unknown fields inside well-known types (ts, dur, empty, a wrapper, val, any): not printed, kept
    by the re-serialization."""
    d = cls.DESCRIPTOR
    toks = split_fields(b)
    idx = [k for k, t in enumerate(toks) if t.fn in (1, 2, 4, 6, 8, 11, 15, 18, 19) and t.wt == LEN]
    if not idx:
        return None
    labels = []
    for k in sorted(rng.sample(idx, min(len(idx), rng.randint(1, 2)))):
        t = toks[k]
        lab, raw = rng.choice([("99:varint", tag(99, VARINT) + varint(99)), ("7:len", ld(7, b"?")),
                               ("9:i32", tag(9, I32) + b"\x01\x02\x03\x04")])
        p = join(insert_at_random(rng, split_fields(t.payload), split_fields(raw)))
        toks[k] = _len_tok(t.fn, p)
        labels.append("%s.%s" % (d.fields_by_number[t.fn].name, lab))
    return join(toks), "unknown:" + ",".join(labels)


def nc_wkt_any_value_first(rng, cls, b):
    """`any` with its value bytes before its type_url (fields out of order inside the Any)."""
    toks = split_fields(b)
    i = _first(toks, 18)
    if i is None:
        return None
    inner = split_fields(toks[i].payload)
    if len({t.fn for t in inner}) < 2:
        return None
    p = join([t for t in inner if t.fn == 2] + [t for t in inner if t.fn != 2])
    toks[i] = _len_tok(18, p)
    return join(toks), "reordered:any.value_first"


WKT_NC = [nc_wkt_split_ts, nc_wkt_dup_duration, nc_wkt_value_oneof_two, nc_wkt_struct_dup_key,
          nc_wkt_wrapper_zero, nc_wkt_unknown_inside, nc_wkt_any_value_first, nc_reordered]


# ---------------------------------------------------------------------------------------------------
# Oracle and output.


def oracle(cls, payload):
    msg = cls.FromString(payload)
    # An Any's type is looked up in the pool made from the .pb file (not the default pool).
    pool = cls.DESCRIPTOR.file.pool
    d = json_format.MessageToDict(msg, preserving_proto_field_name=True, descriptor_pool=pool)
    d_all = json_format.MessageToDict(msg, preserving_proto_field_name=True,
                                      always_print_fields_with_no_presence=True, descriptor_pool=pool)
    if msg.IsInitialized():
        det = msg.SerializeToString(deterministic=True)
    else:
        det = msg.SerializePartialToString(deterministic=True)
    return d, d_all, det, msg.IsInitialized()


def build(cls, rng, specials, gen, ncs, n, nc_rate, extra=()):
    """[(payload, label)] for n records: the specials (canonical), the `extra` (payload, label) pairs,
    then random ones."""
    records = []
    for _, m in specials:
        records.append((m.SerializeToString(deterministic=True), None))
    records += list(extra)
    k = 0
    while len(records) < n:
        m = gen(rng, cls)
        base = m.SerializeToString(deterministic=True)
        label = None
        payload = base
        if rng.random() < nc_rate:
            # cycle through the rewrites so that every one is used; a few records get two
            labels = []
            for _ in range(len(ncs)):  # the next rewrite in the cycle that applies
                f = ncs[k % len(ncs)]
                k += 1
                r = f(rng, cls, payload)
                if r is not None:
                    payload, lab = r
                    labels.append(lab)
                    break
            if labels and rng.random() < 0.2:
                r = rng.choice([g for g in ncs if g is not f])(rng, cls, payload)
                if r is not None:
                    payload, lab = r
                    labels.append(lab)
            label = " + ".join(labels) if labels else None
            if label is None:
                payload = base
        records.append((payload, label))
    return records


def write_outputs(name, cls, records):
    frames, lines = [], []
    for payload, label in records:
        d, d_all, det, initialized = oracle(cls, payload)
        if label is None:
            assert payload == det, (name, payload.hex(), det.hex())
        # the deterministic bytes parse to the same dict and re-serialize to themselves
        d2, d2_all, det2, _ = oracle(cls, det)
        assert (d2, d2_all, det2) == (d, d_all, det), name
        assert initialized or "missing_required" in (label or ""), (name, label)
        frames.append(tf_frame(payload))
        lines.append(json.dumps({"dict": d, "dict_all": d_all,
                                 "deterministic_b64": base64.b64encode(det).decode("ascii"),
                                 "noncanonical": label}, ensure_ascii=False, allow_nan=False))
    tfr = os.path.join(OUT, name + ".tfrecord")
    with open(tfr, "wb") as f:
        f.write(b"".join(frames))
    with open(os.path.join(OUT, name + ".expected.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(line + "\n" for line in lines))
    with open(tfr, "rb") as f:
        assert tf_read(f.read()) == [p for p, _ in records]


def map_order_free(desc, b):
    """b with the map entries sorted, at every level of nesting (Wkt's Struct maps are nested), to
    compare two serializations that differ only in the order of map entries."""
    plain, entries = [], []
    for t in split_fields(b):
        fd = desc.fields_by_number.get(t.fn)
        x = t.raw
        if fd is not None and fd.message_type is not None and t.wt == LEN:
            x = (t.fn, map_order_free(fd.message_type, t.payload))
        if fd is not None and fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            entries.append(x)
        else:
            plain.append(x)
    return plain, sorted(entries, key=repr)


def check_upb(sets):
    """Re-parses every payload with the upb runtime: same dicts (key order ignored), same bytes but
    for the order of map entries (upb's deterministic order is not ascending by key, see README)."""
    problems = 0
    map_order = collections.Counter()
    for name, cls in sets:
        with open(os.path.join(OUT, name + ".tfrecord"), "rb") as f:
            payloads = tf_read(f.read())
        with open(os.path.join(OUT, name + ".expected.jsonl"), encoding="utf-8") as f:
            lines = [json.loads(x) for x in f]
        assert len(payloads) == len(lines)
        for i, (p, exp) in enumerate(zip(payloads, lines)):
            d, d_all, det, _ = oracle(cls, p)
            want_det = base64.b64decode(exp["deterministic_b64"])
            ok = (json.loads(json.dumps(d)) == exp["dict"] and json.loads(json.dumps(d_all)) == exp["dict_all"])
            if ok and det != want_det:
                if map_order_free(cls.DESCRIPTOR, det) == map_order_free(cls.DESCRIPTOR, want_det):
                    map_order[name] += 1
                else:
                    ok = False
            if not ok:
                problems += 1
                print("upb differs: %s record %d (%s)" % (name, i, exp["noncanonical"]))
                print("  upb:   ", d, base64.b64encode(det).decode("ascii"))
                print("  python:", exp["dict"], exp["deterministic_b64"])
    print("upb cross-check: %d differences; records whose deterministic bytes differ only in the order of "
          "map entries: %s" % (problems, ", ".join("%s %d" % (n, map_order[n]) for n, _ in sets)))
    return problems


def main():
    if CHECK_UPB:
        sys.exit(1 if check_upb([(name, load_class(os.path.join(OUT, name + ".pb"), full_name))
                                 for name, full_name in SETS]) else 0)

    S = load_class(compile_proto("shapes"), "rwtest.Shapes")
    L = load_class(compile_proto("legacy"), "rwtest.Legacy")
    W = load_class(compile_proto("wkt"), "rwtest.Wkt")

    shapes = build(S, random.Random(SEED_SHAPES), special_shapes(S), gen_shapes, SHAPES_NC, N_SHAPES, 0.7)
    legacy = build(L, random.Random(SEED_LEGACY), special_legacy(L), gen_legacy, LEGACY_NC, N_LEGACY, 0.8)
    wkt = build(W, random.Random(SEED_WKT), special_wkt(W), gen_wkt, WKT_NC, N_WKT, 0.6,
                noncanonical_wkt())
    write_outputs("shapes", S, shapes)
    write_outputs("legacy", L, legacy)
    write_outputs("wkt", W, wkt)

    rc = subprocess.call([sys.executable, os.path.abspath(__file__), "--check-upb"])
    assert rc == 0, "upb cross-check failed"

    print("Python %s, protobuf %s (generation: %s runtime; cross-check: upb), grpcio-tools %s (%s)" % (
        platform.python_version(), importlib.metadata.version("protobuf"), api_implementation.Type(),
        importlib.metadata.version("grpcio-tools"),
        subprocess.check_output([sys.executable, "-m", "grpc_tools.protoc", "--version"]).decode().strip()))
    for name, recs in (("shapes", shapes), ("legacy", legacy), ("wkt", wkt)):
        c = collections.Counter(part.split(":")[0] for _, lab in recs if lab for part in lab.split(" + "))
        print("%s: %d records, %d non-canonical (%d with two rewrites); rewrites used: %s" % (
            name, len(recs), sum(1 for _, lab in recs if lab), sum(1 for _, lab in recs if " + " in (lab or "")),
            ", ".join("%s %d" % kv for kv in sorted(c.items()))))
    total = 0
    for fn in sorted(os.listdir(OUT)):
        path = os.path.join(OUT, fn)
        size = os.path.getsize(path)
        total += size
        with open(path, "rb") as f:
            print("  %-26s %7d bytes  sha256 %s" % (fn, size, hashlib.sha256(f.read()).hexdigest()[:16]))
    print("  total %d bytes" % total)


if __name__ == "__main__":
    main()
