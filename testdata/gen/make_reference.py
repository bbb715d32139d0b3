#!/usr/bin/env python3
"""Writes recordwire's reference test data with an independent implementation.

Everything under testdata/ref/ and testdata/bad/ is produced here, deterministically (fixed seeds),
with Google's protobuf (Python) and TensorFlow's tf.io.TFRecordWriter / tf.data.TFRecordDataset.
See testdata/gen/README.md for how to rerun it and the versions used.

    python testdata/gen/make_reference.py            # regenerate and verify everything
    python testdata/gen/make_reference.py --check-upb  # (run by the above) cross-check with upb

Protobuf implementation: the generator runs with PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python,
Google's pure-Python protobuf runtime, because its maps keep insertion order: SerializeToString
writes map entries in the order they were inserted, ParseFromString keeps wire order, and so
MessageToDict (and the .jsonl files) list features in wire order. (The default upb runtime
iterates maps in hash order.) Every payload and every JSON line is then cross-checked in a
subprocess with the upb runtime (dicts compared as values, key order ignored).
"""

import os
import sys

CHECK_UPB = "--check-upb" in sys.argv
# Must be set before google.protobuf is imported (TensorFlow imports it too).
os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "upb" if CHECK_UPB else "python"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import base64  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import zlib  # noqa: E402

GEN = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.dirname(GEN)
REF = os.path.join(TESTDATA, "ref")
BAD = os.path.join(TESTDATA, "bad")

import google.protobuf  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from google.protobuf.internal import api_implementation  # noqa: E402

assert api_implementation.Type() == os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"], (
    api_implementation.Type())

import tensorflow as tf  # noqa: E402
from tensorflow.core.example import example_pb2, feature_pb2  # noqa: E402


def load_record_pb2():
    """Compiles gen/record.proto (OneFlow, proto2) with grpc_tools' protoc into a temp dir."""
    # protoc runs in a subprocess: grpc_tools' compiler crashes when loaded next to TensorFlow.
    out = tempfile.mkdtemp(prefix="recordwire_pb2_")
    rc = subprocess.call([sys.executable, "-m", "grpc_tools.protoc", "-I" + GEN, "--python_out=" + out,
                          os.path.join(GEN, "record.proto")])
    if rc != 0:
        raise SystemExit("protoc failed on record.proto")
    sys.path.insert(0, out)
    import record_pb2  # noqa: F401

    sys.path.remove(out)
    shutil.rmtree(out)

    d = record_pb2.Feature.DESCRIPTOR
    assert [(f.name, f.number) for f in d.fields] == [
        ("bytes_list", 1), ("float_list", 2), ("double_list", 3), ("int32_list", 4), ("int64_list", 5)]
    for m in (record_pb2.FloatList, record_pb2.DoubleList, record_pb2.Int32List, record_pb2.Int64List):
        assert m.DESCRIPTOR.fields_by_name["value"].is_packed, m
    return record_pb2


record_pb2 = load_record_pb2()

# --------------------------------------------------------------------------------------------
# CRC32C (Castagnoli), table-driven, and TFRecord's mask (docs/FORMAT.md §1.3).

def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
try:  # optional cross-check with Google's C implementation
    import google_crc32c

    assert google_crc32c.value(b"recordwire" * 100) == crc32c(b"recordwire" * 100)
except ImportError:
    pass


def tf_frame(data):
    n = struct.pack("<Q", len(data))
    return n + struct.pack("<I", masked_crc(n)) + data + struct.pack("<I", masked_crc(data))


def of_frame(data):
    return struct.pack("<q", len(data)) + data  # OneFlow: struct.pack("q", len) on little-endian


def tf_frames_strict(buf):
    """(offset, payload) of every frame of a valid TFRecord stream; asserts both CRCs."""
    out, pos = [], 0
    while pos < len(buf):
        assert len(buf) - pos >= 16, "truncated"
        (length,) = struct.unpack_from("<Q", buf, pos)
        (lcrc,) = struct.unpack_from("<I", buf, pos + 8)
        assert masked_crc(buf[pos:pos + 8]) == lcrc, "length crc at %d" % pos
        end = pos + 12 + length
        assert end + 4 <= len(buf), "truncated"
        (dcrc,) = struct.unpack_from("<I", buf, end)
        assert masked_crc(buf[pos + 12:end]) == dcrc, "data crc at %d" % pos
        out.append((pos, buf[pos + 12:end]))
        pos = end + 4
    return out


def of_frames_strict(buf):
    out, pos = [], 0
    while pos < len(buf):
        (length,) = struct.unpack_from("<q", buf, pos)
        assert 0 <= length <= len(buf) - pos - 8
        out.append((pos, buf[pos + 8:pos + 8 + length]))
        pos += 8 + length
    return out


# --------------------------------------------------------------------------------------------
# small helpers

def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def rel(path):
    return os.path.relpath(path, TESTDATA)


def to_json_line(msg):
    return json.dumps(json_format.MessageToDict(msg, preserving_proto_field_name=True), ensure_ascii=False)


def write_jsonl(path, lines):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")


def canon(obj):
    return json.dumps(obj, sort_keys=True, ensure_ascii=False)


COMPRESSION_TF = {"none": "", "gzip": "GZIP", "zlib": "ZLIB"}


def tf_write(path, payloads, compression="none"):
    opts = tf.io.TFRecordOptions(compression_type=COMPRESSION_TF[compression])
    with tf.io.TFRecordWriter(path, options=opts) as w:
        for p in payloads:
            w.write(p)


def tf_read(path, compression="none"):
    """Records as TensorFlow reads them: (list of bytes, error message or None)."""
    out = []
    ds = tf.data.TFRecordDataset(path, compression_type=COMPRESSION_TF[compression])
    it = iter(ds)
    while True:
        try:
            out.append(next(it).numpy())
        except StopIteration:
            return out, None
        except tf.errors.OpError as e:
            return out, "%s: %s" % (type(e).__name__, clean_tf_message(e.message))


def clean_tf_message(msg):
    """The first line of a TensorFlow error without the eager-op decorations."""
    msg = msg.strip().splitlines()[0]
    msg = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", msg)
    msg = re.sub(r"\s*\[Op:[^\]]*\]( name:.*)?$", "", msg)
    return msg


def decompress(raw, compression):
    if compression == "none":
        return raw
    return zlib.decompress(raw, wbits=31 if compression == "gzip" else 15)


# --------------------------------------------------------------------------------------------
# feature builders (tf.Example)

def fb(*v):
    return feature_pb2.Feature(bytes_list=feature_pb2.BytesList(value=list(v)))


def ff(*v):
    return feature_pb2.Feature(float_list=feature_pb2.FloatList(value=list(v)))


def fi(*v):
    return feature_pb2.Feature(int64_list=feature_pb2.Int64List(value=list(v)))


def fnone():
    return feature_pb2.Feature()


def make_features(msg, feats):
    for name, f in feats:
        assert name not in msg.feature, name
        msg.feature[name].CopyFrom(f)


def ex(feats, set_features=True):
    e = example_pb2.Example()
    if set_features:
        e.features.SetInParent()
    make_features(e.features, feats)
    return e


NAN, INF = float("nan"), float("inf")
F32_MAX = 3.4028235e38
SPECIAL_FLOATS = [0.1, -0.0, 1e-45, F32_MAX, NAN, INF, -INF, 1.0, 0.5]
INT64_EXTREMES = [0, -1, 2**63 - 1, -2**63, 300]

NAME_POOL = [
    "label", "image", "image/encoded", "image/height", "image/width", "image/format",
    "bbox/xmin", "bbox/ymin", "bbox/xmax", "bbox/ymax", "text", "tokens", "score", "weights",
    "id", "größe", "日本", "emoji 😀", "a", "b", "x" * 40, "ключ", "clé", "mask", "embedding",
]


def rand_f32(rng):
    r = rng.random()
    if r < 0.3:
        return rng.uniform(-1.0, 1.0)
    if r < 0.5:
        return round(rng.uniform(-1000.0, 1000.0), rng.randint(0, 3))
    if r < 0.6:
        return float(rng.randint(-100, 100))
    while True:  # any finite float32 bit pattern (normals, denormals, +-0)
        bits = rng.getrandbits(32)
        if (bits >> 23) & 0xFF != 0xFF:
            return struct.unpack("<f", struct.pack("<I", bits))[0]


def rand_f64(rng):
    r = rng.random()
    if r < 0.4:
        return rng.uniform(-1.0, 1.0)
    if r < 0.6:
        return round(rng.uniform(-1e6, 1e6), rng.randint(0, 6))
    while True:
        bits = rng.getrandbits(64)
        if (bits >> 52) & 0x7FF != 0x7FF:
            return struct.unpack("<d", struct.pack("<Q", bits))[0]


def rand_i64(rng):
    r = rng.random()
    if r < 0.4:
        return rng.randint(-10, 300)
    if r < 0.6:
        return rng.randint(-2**31, 2**31)
    if r < 0.8:
        return rng.randint(-2**63, 2**63 - 1)
    return rng.choice([1, -1]) * (2 ** rng.randint(0, 62)) + rng.choice([-1, 0, 0, 1])


def rand_i32(rng):
    r = rng.random()
    if r < 0.5:
        return rng.randint(-10, 300)
    return rng.randint(-2**31, 2**31 - 1)


def rand_bytes(rng):
    n = rng.choice([0, 1, 3, 8, 16, 33, 64, 130])
    if rng.random() < 0.5:
        return rng.randbytes(n)
    return "".join(rng.choice("abcdefghij klmnopqrstuvwxyz0123456789") for _ in range(n)).encode()


def rand_name(rng, used):
    while True:
        if rng.random() < 0.6:
            name = rng.choice(NAME_POOL)
        else:
            name = "f%d" % rng.randint(0, 999)
        if name not in used:
            used.add(name)
            return name


def rand_tf_feature(rng):
    r = rng.random()
    n = rng.choice([0, 1, 1, 1, 2, 3, 5, 8, 20])
    if r < 0.3:
        return fb(*[rand_bytes(rng) for _ in range(n)])
    if r < 0.6:
        return ff(*[rand_f32(rng) for _ in range(n)])
    if r < 0.93:
        return fi(*[rand_i64(rng) for _ in range(n)])
    return fnone()


def rand_tf_features(rng, count):
    used = set()
    return [(rand_name(rng, used), rand_tf_feature(rng)) for _ in range(count)]


# --------------------------------------------------------------------------------------------
# reference payloads

def build_examples():
    rng = random.Random(20240601)
    recs = []
    # 0: the example of docs/FORMAT.md §5.1
    recs.append(ex([("label", fi(7)), ("image", fb(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01")),
                    ("w", ff(1.0, 0.5))]))
    # 1: Example() (features absent); 2: Example(features=Features()) (present, empty)
    recs.append(example_pb2.Example())
    recs.append(example_pb2.Example(features=feature_pb2.Features()))
    # 3: int64 extremes and varint boundaries
    recs.append(ex([("int64_extremes", fi(*INT64_EXTREMES)),
                    ("varint_edges", fi(1, 127, 128, 16383, 16384, 2**31 - 1, 2**31, -2**31, 2**32,
                                        2**56, 2**62, -2**62))]))
    # 4: floats
    recs.append(ex([("floats", ff(*SPECIAL_FLOATS)),
                    ("more_floats", ff(1.1754943508222875e-38, -F32_MAX, 16777216.0, 16777217.0,
                                       3.14159265, 1e-10, 123456.789, 0.0, -1.5, 4.203895392974451e-45,
                                       1e30, 9.99999e-39, 0.3, 2.0 / 3.0, 1e7, 1e-7, 65504.0))]))
    # 5: bytes
    recs.append(ex([("empty_bytes", fb(b"")), ("all_bytes", fb(bytes(range(256)))),
                    ("big", fb(rng.randbytes(5000))), ("multi", fb(b"a", b"", b"\x00", b"hello world"))]))
    # 6: empty lists of each kind, and a feature with no kind
    recs.append(ex([("bytes_empty", fb()), ("float_empty", ff()), ("int64_empty", fi()),
                    ("no_kind", fnone())]))
    # 7: names: non-ASCII, empty, characters JSON must escape
    recs.append(ex([("größe", fi(180)), ("日本", fb("東京".encode())), ("", ff(42.0)),
                    ("emoji 😀", fi(1)), ('quote"back\\slash\ttab\nnl', fi(2)),
                    ("\x00nul\x1f\x7f", fi(3)), ("line\u2028sep", fi(4))]))
    # 8: only a kind-less feature; 9: only the empty name, with an empty list
    recs.append(ex([("nothing", fnone())]))
    recs.append(ex([("", ff())]))
    # 10: a 100 KB bytes value
    recs.append(ex([("label", fi(1)), ("blob", fb(rng.randbytes(100 * 1024)))]))
    # 11: long numeric lists
    recs.append(ex([("embedding", ff(*[rand_f32(rng) for _ in range(1000)])),
                    ("ids", fi(*[rand_i64(rng) for _ in range(500)]))]))
    # 12: 15 features of every kind
    recs.append(ex(rand_tf_features(rng, 15)))
    # 13..39: random, 0 to 15 features
    for i in range(13, 40):
        count = rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15])
        recs.append(ex(rand_tf_features(rng, count), set_features=(count > 0 or rng.random() < 0.5)))
    return recs


def fl(*feats):
    return list(feats)


def seq(context=None, lists=None):
    s = example_pb2.SequenceExample()
    if context is not None:
        s.context.SetInParent()
        make_features(s.context, context)
    if lists is not None:
        s.feature_lists.SetInParent()
        for name, feats in lists:
            assert name not in s.feature_lists.feature_list
            entry = s.feature_lists.feature_list[name]  # creates the (possibly empty) FeatureList
            for f in feats:
                entry.feature.add().CopyFrom(f)
    return s


def build_sequence_examples():
    rng = random.Random(777)
    recs = [
        # 0: nothing at all
        example_pb2.SequenceExample(),
        # 1: only context
        seq(context=[("length", fi(3)), ("name", fb(b"seq-1")), ("score", ff(0.25))]),
        # 2: only feature_lists
        seq(lists=[("tokens", fl(fi(1, 2), fi(3), fi()))]),
        # 3: both, with an empty FeatureList and a kind-less feature inside a list
        seq(context=[("id", fb(b"clip-0003")), ("fps", ff(29.97))],
            lists=[("frames", fl(fb(b"\x89PNG\r\n\x1a\n"), fb(b""), fb(b"\x00\x01\x02"))),
                   ("empty_list", fl()),
                   ("mixed", fl(fi(5), ff(0.5, -0.0), fnone(), fb(b"x"))),
                   ("weights", fl(ff(*SPECIAL_FLOATS)))]),
        # 4: names
        seq(context=[("größe", fi(1)), ("", fi(2))],
            lists=[("日本", fl(fi(1))), ("", fl(ff(1.0))), ("emoji 😀", fl())]),
        # 5: context and feature_lists present but empty
        example_pb2.SequenceExample(context=feature_pb2.Features(), feature_lists=feature_pb2.FeatureLists()),
        # 6: a long FeatureList
        seq(context=[("n", fi(50))],
            lists=[("audio", [ff(*[rand_f32(rng) for _ in range(8)]) for _ in range(50)]),
                   ("labels", [fi(rng.randint(0, 9)) for _ in range(50)])]),
        # 7: int64 extremes and an empty-list context feature
        seq(context=[("ext", fi(*INT64_EXTREMES)), ("e", ff())],
            lists=[("only_empty", fl(fb(), ff(), fi(), fnone()))]),
    ]
    # 8, 9: random
    for _ in range(2):
        ctx = rand_tf_features(rng, rng.randint(0, 4))
        used = set()
        lists = [(rand_name(rng, used), [rand_tf_feature(rng) for _ in range(rng.randint(0, 4))])
                 for _ in range(rng.randint(1, 4))]
        recs.append(seq(context=ctx, lists=lists))
    return recs


def ob(*v):
    return record_pb2.Feature(bytes_list=record_pb2.BytesList(value=list(v)))


def of32(*v):
    return record_pb2.Feature(float_list=record_pb2.FloatList(value=list(v)))


def of64(*v):
    return record_pb2.Feature(double_list=record_pb2.DoubleList(value=list(v)))


def oi32(*v):
    return record_pb2.Feature(int32_list=record_pb2.Int32List(value=list(v)))


def oi64(*v):
    return record_pb2.Feature(int64_list=record_pb2.Int64List(value=list(v)))


def onone():
    return record_pb2.Feature()


def ofrec(feats):
    r = record_pb2.OFRecord()
    for name, f in feats:
        assert name not in r.feature
        r.feature[name].CopyFrom(f)
    return r


def rand_of_feature(rng):
    n = rng.choice([0, 1, 1, 2, 3, 5, 8])
    k = rng.randrange(6)
    if k == 0:
        return ob(*[rand_bytes(rng) for _ in range(n)])
    if k == 1:
        return of32(*[rand_f32(rng) for _ in range(n)])
    if k == 2:
        return of64(*[rand_f64(rng) for _ in range(n)])
    if k == 3:
        return oi32(*[rand_i32(rng) for _ in range(n)])
    if k == 4:
        return oi64(*[rand_i64(rng) for _ in range(n)])
    return onone()


def build_ofrecords():
    rng = random.Random(31337)
    # 0: like the OneFlow documentation: a 28*28 image as floats in [0, 1) and an int32 label
    image = [rng.random() for _ in range(28 * 28)]
    recs = [ofrec([("images", of32(*image)), ("labels", oi32(5))])]
    recs.append(record_pb2.OFRecord())  # 1: empty
    recs.append(ofrec([("int32", oi32(-2**31, 2**31 - 1, -1, 0, 1, 127, 128, 300, -300))]))  # 2
    recs.append(ofrec([("int64", oi64(*INT64_EXTREMES))]))  # 3
    recs.append(ofrec([("doubles", of64(NAN, INF, -INF, -0.0, 5e-324, 1.7976931348623157e308, 0.1,
                                        2.2250738585072014e-308, 1.0, 0.5, 1e-300, 1.0 / 3.0))]))  # 4
    recs.append(ofrec([("floats", of32(*SPECIAL_FLOATS))]))  # 5
    recs.append(ofrec([("empty_bytes", ob(b"")), ("all_bytes", ob(bytes(range(256)))),
                       ("random", ob(rng.randbytes(300), b"", b"jpeg?"))]))  # 6
    recs.append(ofrec([("bytes_empty", ob()), ("float_empty", of32()), ("double_empty", of64()),
                       ("int32_empty", oi32()), ("int64_empty", oi64()), ("no_kind", onone())]))  # 7
    recs.append(ofrec([("größe", oi32(180)), ("日本", ob("東京".encode())), ("", of64(42.0)),
                       ("emoji 😀", oi64(1)), ('quote"back\\slash\ttab\nnl', oi32(2))]))  # 8
    recs.append(ofrec([("b", ob(b"bytes")), ("f", of32(0.25, -0.0)), ("d", of64(0.25, -0.0)),
                       ("i32", oi32(-7)), ("i64", oi64(-7))]))  # 9: all five kinds
    for _ in range(10, 20):
        used = set()
        recs.append(ofrec([(rand_name(rng, used), rand_of_feature(rng)) for _ in range(rng.randint(0, 8))]))
    return recs


def build_small():
    rng = random.Random(8)
    recs = []
    for i in range(10):
        label = (i * 7 + 3) % 10
        image = bytes(min(255, (x * 29 + y * 13 + label * 25) % 256 // 2 + rng.randrange(128))
                      for y in range(8) for x in range(8))
        x0, y0 = rng.randrange(4) / 8, rng.randrange(4) / 8
        recs.append(ex([("label", fi(label)), ("image", fb(image)), ("bbox", ff(x0, y0, x0 + 0.5, y0 + 0.5))]))
    return recs


# --------------------------------------------------------------------------------------------
# reference files

MESSAGE_TYPES = {
    "example": example_pb2.Example,
    "sequence_example": example_pb2.SequenceExample,
    "ofrecord": record_pb2.OFRecord,
}
EXT = {"none": "", "gzip": ".gz", "zlib": ".zlib"}


def check_roundtrip(payload, cls, line):
    """The JSON line encodes back to exactly the payload bytes (insertion = wire order)."""
    assert parse_json_line(line, cls).SerializeToString() == payload, line[:200]


def parse_json_line(line, cls):
    try:
        return json_format.ParseDict(json.loads(line), cls())
    except json_format.ParseError as e:
        # json_format prints float32's largest value as 3.4028235e+38 (ToShortestFloat) but its own
        # parser rejects that for a float field ("Float value too large": the decimal is above
        # FLT_MAX as a double, though it rounds to FLT_MAX as a float). Retry with such values clamped.
        assert "Float value too" in str(e), e
        return json_format.ParseDict(json.loads(line, parse_float=_clamp_f32_max), cls())


def _clamp_f32_max(text):
    v = float(text)
    if F32_MAX_EXACT < abs(v) < 3.4028235677973366e38:  # rounds to +-FLT_MAX in float32
        return math.copysign(F32_MAX_EXACT, v)
    return v


F32_MAX_EXACT = float.fromhex("0x1.fffffep+127")


def ref_tf_file(name, msgs, payload_kind, compressions, manifest):
    payloads = [m.SerializeToString() for m in msgs]
    cls = MESSAGE_TYPES[payload_kind]
    plain = None
    for comp in compressions:
        path = os.path.join(REF, name + EXT[comp])
        tf_write(path, payloads, comp)
        got, err = tf_read(path, comp)
        assert err is None and got == payloads, (path, err)
        raw = read(path)
        stream = decompress(raw, comp)
        frames = tf_frames_strict(stream)
        assert [p for _, p in frames] == payloads
        assert b"".join(tf_frame(p) for p in payloads) == stream  # our CRC == TensorFlow's
        if plain is None:
            plain = stream
        assert stream == plain
        manifest.append({
            "file": rel(path), "framing": "tfrecord", "compression": comp, "payload": payload_kind,
            "records": len(payloads), "size": len(raw), "sha256": sha256(raw),
            "decompressed_size": len(stream),
            "frame_offsets": [o for o, _ in frames] + [len(stream)],
            "jsonl": rel(os.path.join(REF, name.split(".")[0] + ".jsonl")),
        })
    # JSON from what TensorFlow read back, parsed with protobuf
    got, _ = tf_read(os.path.join(REF, name), "none")
    lines = []
    for p in got:
        msg = cls.FromString(p)
        line = to_json_line(msg)
        check_roundtrip(p, cls, line)
        lines.append(line)
    write_jsonl(os.path.join(REF, name.split(".")[0] + ".jsonl"), lines)
    return payloads


def ref_of_file(name, jsonl, msgs, manifest):
    payloads = [m.SerializeToString() for m in msgs]
    path = os.path.join(REF, name)
    write(path, b"".join(of_frame(p) for p in payloads))
    raw = read(path)
    frames = of_frames_strict(raw)
    assert [p for _, p in frames] == payloads
    lines = []
    for p in [p for _, p in frames]:
        msg = record_pb2.OFRecord.FromString(p)
        line = to_json_line(msg)
        check_roundtrip(p, record_pb2.OFRecord, line)
        lines.append(line)
    write_jsonl(os.path.join(REF, jsonl), lines)
    manifest.append({
        "file": rel(path), "framing": "ofrecord", "compression": "none", "payload": "ofrecord",
        "records": len(payloads), "size": len(raw), "sha256": sha256(raw), "decompressed_size": len(raw),
        "frame_offsets": [o for o, _ in frames] + [len(raw)], "jsonl": rel(os.path.join(REF, jsonl)),
    })


def make_ref():
    os.makedirs(REF, exist_ok=True)
    manifest = []
    ref_tf_file("examples.tfrecord", build_examples(), "example", ["none", "gzip", "zlib"], manifest)
    ref_tf_file("sequence_examples.tfrecord", build_sequence_examples(), "sequence_example", ["none"], manifest)
    ref_of_file("ofrecord.part-0", "ofrecord.jsonl", build_ofrecords(), manifest)
    ref_tf_file("small.tfrecord", build_small(), "example", ["none"], manifest)
    # empty files: zero records (TFRecordWriter with nothing written)
    for comp in ("none", "gzip"):
        path = os.path.join(REF, "empty.tfrecord" + EXT[comp])
        tf_write(path, [], comp)
        raw = read(path)
        assert tf_read(path, comp) == ([], None) and decompress(raw, comp) == b""
        manifest.append({"file": rel(path), "framing": "tfrecord", "compression": comp, "payload": "example",
                         "records": 0, "size": len(raw), "sha256": sha256(raw), "decompressed_size": 0,
                         "frame_offsets": [0], "jsonl": None})
    return manifest


# --------------------------------------------------------------------------------------------
# damaged files

def simulate(stream, framing, payload_kind, policy, stream_error=None):
    """The project's reading rules (docs/FORMAT.md §8.4) on a (decompressed) stream.

    Returns (delivered, errors) with errors as (kind, record, offset). stream_error: the
    decompressor failed after producing `stream` (compression_error at the first frame that is
    incomplete, or at the end of the stream if all frames are complete).
    """
    cls = MESSAGE_TYPES[payload_kind]
    hdr = 12 if framing == "tfrecord" else 8
    delivered, errors, pos, rec, n = 0, [], 0, 0, len(stream)

    def incomplete(kind):
        errors.append(("compression_error" if stream_error else kind, rec, pos))

    while pos < n:
        if n - pos < hdr:
            incomplete("truncated_header")
            return delivered, errors
        if framing == "tfrecord":
            (length,) = struct.unpack_from("<Q", stream, pos)
            (lcrc,) = struct.unpack_from("<I", stream, pos + 8)
            if masked_crc(stream[pos:pos + 8]) != lcrc:
                errors.append(("length_crc_mismatch", rec, pos))
                if policy == "fail":
                    return delivered, errors
                p = pos + 1
                while p + 12 <= n and masked_crc(stream[p:p + 8]) != struct.unpack_from("<I", stream, p + 8)[0]:
                    p += 1
                pos = p if p + 12 <= n else n
                rec += 1
                continue
            end = pos + 12 + length + 4
        else:
            (length,) = struct.unpack_from("<q", stream, pos)
            if length < 0:
                errors.append(("invalid_length", rec, pos))
                return delivered, errors
            end = pos + 8 + length
        if end > n:
            incomplete("truncated_data")
            return delivered, errors
        payload = stream[pos + hdr:pos + hdr + length]
        if framing == "tfrecord":
            (dcrc,) = struct.unpack_from("<I", stream, end - 4)
            if masked_crc(payload) != dcrc:
                errors.append(("data_crc_mismatch", rec, pos))
                if policy == "fail":
                    return delivered, errors
                pos, rec = end, rec + 1
                continue
        try:
            cls.FromString(payload)
        except Exception:  # DecodeError, UnicodeDecodeError
            errors.append(("decode_error", rec, pos))
            if policy == "fail":
                return delivered, errors
            pos, rec = end, rec + 1
            continue
        delivered += 1
        pos, rec = end, rec + 1
    if stream_error:
        errors.append(("compression_error", rec, pos))
    return delivered, errors


def inflate_partial(raw, compression):
    """Feeds the stream to zlib one byte at a time: (all output produced, error or None)."""
    if compression == "none":
        return raw, None
    d = zlib.decompressobj(wbits=31 if compression == "gzip" else 15)
    out = bytearray()
    for i in range(len(raw)):
        if d.eof:
            return bytes(out), "trailing data after the end of the %s stream (%d bytes)" % (
                compression, len(raw) - i)
        try:
            out += d.decompress(raw[i:i + 1])
        except zlib.error as e:
            return bytes(out), "zlib.error at compressed byte %d: %s" % (i, e)
    if not d.eof:
        return bytes(out), "zlib: stream ends before its end (truncated)"
    return bytes(out), None


def base_examples():
    rng = random.Random(5)
    return [ex([("id", fi(i)), ("label", fi(rng.randint(0, 9))), ("payload", fb(rng.randbytes(48))),
                ("score", ff(rng.randrange(1000) / 1000))]) for i in range(5)]


def base_ofrecords():
    rng = random.Random(6)
    return [ofrec([("id", oi64(i)), ("label", oi32(rng.randint(0, 9))), ("payload", ob(rng.randbytes(48))),
                   ("score", of64(rng.randrange(1000) / 1000))]) for i in range(5)]


def make_bad():
    os.makedirs(BAD, exist_ok=True)
    ex_payloads = [m.SerializeToString() for m in base_examples()]
    of_payloads = [m.SerializeToString() for m in base_ofrecords()]

    base = {}
    for comp in ("none", "gzip", "zlib"):
        path = os.path.join(BAD, "base5.tfrecord" + EXT[comp])
        tf_write(path, ex_payloads, comp)
        assert tf_read(path, comp) == (ex_payloads, None)
        base[comp] = read(path)
    tfb = base["none"]
    assert b"".join(tf_frame(p) for p in ex_payloads) == tfb
    assert decompress(base["gzip"], "gzip") == tfb and decompress(base["zlib"], "zlib") == tfb
    ofb = b"".join(of_frame(p) for p in of_payloads)
    write(os.path.join(BAD, "base5.ofrecord"), ofb)
    write_jsonl(os.path.join(BAD, "base5.tfrecord.jsonl"),
                [to_json_line(example_pb2.Example.FromString(p)) for p in ex_payloads])
    write_jsonl(os.path.join(BAD, "base5.ofrecord.jsonl"),
                [to_json_line(record_pb2.OFRecord.FromString(p)) for p in of_payloads])
    tfo = [o for o, _ in tf_frames_strict(tfb)]
    ofo = [o for o, _ in of_frames_strict(ofb)]

    cases = []

    def case(file, framing, compression, payload, kind, record, offset, records_before, skip_delivered,
             note, data, base_file, **extra):
        cases.append(dict(file=file, framing=framing, compression=compression, payload=payload, kind=kind,
                          record=record, offset=offset, records_before=records_before,
                          skip_delivered=skip_delivered, note=note, base=base_file, data=data, **extra))

    def flip(buf, pos, mask=0x01):
        b = bytearray(buf)
        b[pos] ^= mask
        return bytes(b)

    # ---- TFRecord, uncompressed
    case("tf_truncated_header.tfrecord", "tfrecord", "none", "example", "truncated_header", 3, tfo[3], 3, 3,
         "base5.tfrecord cut 5 bytes into the header of frame 3 (file ends at byte %d)." % (tfo[3] + 5),
         tfb[:tfo[3] + 5], "base5.tfrecord")
    len3 = len(ex_payloads[3])
    cut = tfo[3] + 12 + len3 // 2
    case("tf_truncated_data.tfrecord", "tfrecord", "none", "example", "truncated_data", 3, tfo[3], 3, 3,
         "base5.tfrecord cut in the middle of frame 3's data: length %d declared (good length CRC), "
         "%d of its %d data+CRC bytes present (file ends at byte %d)." % (len3, len3 // 2, len3 + 4, cut),
         tfb[:cut], "base5.tfrecord", declared_length=len3, available=len3 // 2)
    pos = tfo[2] + 8
    case("tf_length_crc_mismatch.tfrecord", "tfrecord", "none", "example", "length_crc_mismatch", 2, tfo[2], 2, 4,
         "bit 0 of byte %d (first byte of frame 2's length CRC) flipped: stored 0x%08x, computed 0x%08x. "
         "In skip mode the forward search from byte %d finds the next valid header at byte %d (frame 3), "
         "so records 3 and 4 are delivered." % (
             pos, struct.unpack_from("<I", flip(tfb, pos), pos)[0], masked_crc(tfb[tfo[2]:tfo[2] + 8]),
             tfo[2] + 1, tfo[3]),
         flip(tfb, pos), "base5.tfrecord", stored_crc=struct.unpack_from("<I", flip(tfb, pos), pos)[0],
         computed_crc=masked_crc(tfb[tfo[2]:tfo[2] + 8]), resync_offset=tfo[3])
    # flip a bit inside the 48 random bytes of "payload" so that the payload still parses
    p2 = ex_payloads[2]
    k = p2.index(example_pb2.Example.FromString(p2).features.feature["payload"].bytes_list.value[0]) + 10
    pos = tfo[2] + 12 + k
    damaged = flip(tfb, pos, 0x10)
    example_pb2.Example.FromString(damaged[tfo[2] + 12:tfo[2] + 12 + len(p2)])  # still a valid Example
    case("tf_data_crc_mismatch.tfrecord", "tfrecord", "none", "example", "data_crc_mismatch", 2, tfo[2], 2, 4,
         "bit 4 of byte %d (inside the bytes value of feature 'payload' in record 2) flipped; the payload "
         "still parses as a tf.Example, only the data CRC tells: stored 0x%08x, computed 0x%08x. (TensorFlow "
         "reports the offset of the data, frame start + 12, not of the frame.)" % (
             pos, struct.unpack_from("<I", tfb, tfo[3] - 4)[0],
             masked_crc(damaged[tfo[2] + 12:tfo[2] + 12 + len(p2)])),
         damaged, "base5.tfrecord", stored_crc=struct.unpack_from("<I", tfb, tfo[3] - 4)[0],
         computed_crc=masked_crc(damaged[tfo[2] + 12:tfo[2] + 12 + len(p2)]))

    def replace_tf(i, payload):
        ps = list(ex_payloads)
        ps[i] = payload
        return b"".join(tf_frame(p) for p in ps), [o for o, _ in tf_frames_strict(b"".join(tf_frame(p) for p in ps))]

    bad_payload = ex_payloads[2] + b"\x0f\x01"
    data, offs = replace_tf(2, bad_payload)
    case("tf_decode_error.tfrecord", "tfrecord", "none", "example", "decode_error", 2,
         offs[2] + 12 + len(ex_payloads[2]), 2, 4,
         "record 2's payload is base record 2 (%d bytes, valid) followed by 0x0f 0x01: a tag with field 1 "
         "and wire type 7 (invalid) at payload byte %d; both CRCs recomputed, so the frame is fine. "
         "offset = that tag byte." % (len(ex_payloads[2]), len(ex_payloads[2])),
         data, "base5.tfrecord", payload_offset=offs[2] + 12, payload_hex=bad_payload.hex())
    bad_payload = b"\x0a\x40" + b"\x0a\x0b\x0a\x02id\x12\x05\x1a\x03\x0a\x01\x02"
    data, offs = replace_tf(2, bad_payload)
    case("tf_decode_error_overrun.tfrecord", "tfrecord", "none", "example", "decode_error", 2, offs[2] + 12, 2, 4,
         "record 2's payload (%d bytes) is field 1 (features, tag 0x0a at payload byte 0) declaring length 64 "
         "while only %d bytes follow: a length-delimited field running past its enclosing message. "
         "offset = that field's tag byte (= payload start). CRCs are correct." % (len(bad_payload), len(bad_payload) - 2),
         data, "base5.tfrecord", payload_offset=offs[2] + 12, payload_hex=bad_payload.hex())
    bad_payload = b"\x0a\x0f\x0a\x0d\x0a\x04id\xff\xfe\x12\x05\x1a\x03\x0a\x01\x02"
    data, offs = replace_tf(2, bad_payload)
    case("tf_decode_error_utf8.tfrecord", "tfrecord", "none", "example", "decode_error", 2, None, 2, 4,
         "record 2's payload: one map entry whose key is the 4 bytes 'id' 0xff 0xfe (not UTF-8; the key "
         "field's tag is at payload byte 4, its bytes at 6..9) with value int64_list [2]. tf.Example is proto3, "
         "so Google's parsers reject it; TensorFlow's own C++ example parser does not check UTF-8 (see "
         "tf_parse_single_example below). CRCs are correct.",
         data, "base5.tfrecord", payload_offset=offs[2] + 12, payload_hex=bad_payload.hex())

    # ---- OFRecord
    case("of_truncated_header.ofrecord", "ofrecord", "none", "ofrecord", "truncated_header", 3, ofo[3], 3, 3,
         "base5.ofrecord cut 5 bytes into the 8-byte length of frame 3 (file ends at byte %d)." % (ofo[3] + 5),
         ofb[:ofo[3] + 5], "base5.ofrecord")
    len3 = len(of_payloads[3])
    case("of_truncated_data.ofrecord", "ofrecord", "none", "ofrecord", "truncated_data", 3, ofo[3], 3, 3,
         "base5.ofrecord cut in the middle of frame 3's data: length %d declared, %d bytes present "
         "(file ends at byte %d)." % (len3, len3 // 2, ofo[3] + 8 + len3 // 2),
         ofb[:ofo[3] + 8 + len3 // 2], "base5.ofrecord", declared_length=len3, available=len3 // 2)
    neg = -len(of_payloads[2])
    data = ofb[:ofo[2]] + struct.pack("<q", neg) + ofb[ofo[2] + 8:]
    case("of_invalid_length.ofrecord", "ofrecord", "none", "ofrecord", "invalid_length", 2, ofo[2], 2, None,
         "frame 2's length replaced by struct.pack('q', %d) (bytes %s); the data bytes are unchanged. "
         "skip_delivered is null: without a checksum there is no way to find the next frame." % (
             neg, struct.pack("<q", neg).hex()),
         data, "base5.ofrecord", declared_length=neg)

    def replace_of(i, payload):
        ps = list(of_payloads)
        ps[i] = payload
        d = b"".join(of_frame(p) for p in ps)
        return d, [o for o, _ in of_frames_strict(d)]

    bad_payload = of_payloads[2] + b"\x0f\x01"
    data, offs = replace_of(2, bad_payload)
    case("of_decode_error.ofrecord", "ofrecord", "none", "ofrecord", "decode_error", 2,
         offs[2] + 8 + len(of_payloads[2]), 2, 4,
         "record 2's payload is base record 2 (%d bytes, valid) followed by 0x0f 0x01: a tag with field 1 "
         "and wire type 7 (invalid) at payload byte %d; the frame length covers it. offset = that tag byte."
         % (len(of_payloads[2]), len(of_payloads[2])),
         data, "base5.ofrecord", payload_offset=offs[2] + 8, payload_hex=bad_payload.hex())
    bad_payload = b"\x0a\x0e\x0a\x01f\x12\x09\x12\x07\x0a\x05\x00\x00\x80\x3f\x00"
    data, offs = replace_of(2, bad_payload)
    case("of_decode_error_packed.ofrecord", "ofrecord", "none", "ofrecord", "decode_error", 2, None, 2, 4,
         "record 2's payload: feature 'f' with a float_list whose packed run (field 1, wire type 2, tag at "
         "payload byte 9, length byte at 10) is 5 bytes long, not a multiple of 4 (bytes 11..15: 1.0f then "
         "one stray byte).",
         data, "base5.ofrecord", payload_offset=offs[2] + 8, payload_hex=bad_payload.hex())

    # ---- compressed TFRecord
    gz, zl = base["gzip"], base["zlib"]
    case("gz_truncated.tfrecord.gz", "tfrecord", "gzip", "example", "compression_error", None, None, None, None,
         "base5.tfrecord.gz (written by TensorFlow, %d bytes) without its last 10 bytes: the 8-byte gzip "
         "trailer and the last 2 bytes of deflate data." % len(gz),
         gz[:-10], "base5.tfrecord.gz")
    garbage = b"TRAILING GARBAGE, NOT A GZIP MEMBER\n"
    case("gz_trailing_garbage.tfrecord.gz", "tfrecord", "gzip", "example", "compression_error", 5, len(tfb), 5, 5,
         "base5.tfrecord.gz followed by %d bytes of garbage (%r), which do not start with the gzip magic "
         "1f 8b. All 5 records decompress fine; the error is at the end of the decompressed stream "
         "(offset = decompressed size %d, record 5)." % (len(garbage), garbage.decode().strip(), len(tfb)),
         gz + garbage, "base5.tfrecord.gz", garbage_offset=len(gz))
    mid = 10 + (len(gz) - 18) // 2
    case("gz_corrupt_deflate.tfrecord.gz", "tfrecord", "gzip", "example", "compression_error", None, None, None,
         None,
         "base5.tfrecord.gz with compressed byte %d (in the middle of the deflate data) XOR 0xff. Where the "
         "inflater notices, and whether records before that carry corrupted bytes (possibly a data CRC "
         "mismatch first), depends on the inflater: record/offset/records_before are left null." % mid,
         flip(gz, mid, 0xFF), "base5.tfrecord.gz", corrupt_byte=mid)
    assert gz[:3] == b"\x1f\x8b\x08" and gz[3] == 0  # no optional gzip header fields: deflate at byte 10
    assert gz[10] & 0x06 != 0x06
    case("gz_bad_block_type.tfrecord.gz", "tfrecord", "gzip", "example", "compression_error", 0, 0, 0, 0,
         "base5.tfrecord.gz with the first deflate byte (compressed byte 10) changed from 0x%02x to 0x%02x: "
         "BTYPE = 11 (reserved), so inflation fails before producing any byte; nothing is delivered." % (
             gz[10], gz[10] | 0x06),
         gz[:10] + bytes([gz[10] | 0x06]) + gz[11:], "base5.tfrecord.gz", corrupt_byte=10)
    case("zlib_truncated.tfrecord.zlib", "tfrecord", "zlib", "example", "compression_error", None, None, None,
         None,
         "base5.tfrecord.zlib (written by TensorFlow, %d bytes) without its last 10 bytes: the 4-byte adler32 "
         "trailer and the last 6 bytes of deflate data." % len(zl),
         zl[:-10], "base5.tfrecord.zlib")
    dmg = [c for c in cases if c["file"] == "tf_data_crc_mismatch.tfrecord"][0]["data"]
    co = zlib.compressobj(-1, zlib.DEFLATED, 31, 9)
    case("gz_data_crc_mismatch.tfrecord.gz", "tfrecord", "gzip", "example", "data_crc_mismatch", 2, tfo[2], 2, 4,
         "tf_data_crc_mismatch.tfrecord compressed as one valid gzip stream (Python zlib, level 6, "
         "wbits 31); offset is in the decompressed stream.",
         co.compress(dmg) + co.flush(), "tf_data_crc_mismatch.tfrecord")

    # ---- compute what a reader sees, fill in what depends on the inflater, verify with TensorFlow
    for c in cases:
        path = os.path.join(BAD, c["file"])
        write(path, c["data"])
        stream, zerr = inflate_partial(c["data"], c["compression"])
        d_fail, e_fail = simulate(stream, c["framing"], c["payload"], "fail", zerr)
        d_skip, e_skip = simulate(stream, c["framing"], c["payload"], "skip", zerr)
        kind, record, offset = e_fail[0]
        c["python_zlib"] = zerr
        if c["file"] in ("gz_truncated.tfrecord.gz", "zlib_truncated.tfrecord.zlib"):
            # every byte zlib can produce from the cut stream is delivered; the error is met in the
            # first frame that is not complete in that output
            c["record"], c["offset"], c["records_before"], c["skip_delivered"] = record, offset, d_fail, d_skip
            c["decompressed_available"] = len(stream)
            c["note"] += (" zlib inflates %d of the %d decompressed bytes before running out, so frames 0..%d "
                          "are complete and the error is met in frame %d (offset %d in the decompressed "
                          "stream)." % (len(stream), len(tfb), record - 1, record, offset))
        if c["file"] == "gz_corrupt_deflate.tfrecord.gz":
            c["note"] += (" (For reference: Python's zlib inflates %d decompressed bytes, then reports: %s; "
                          "a reader on that output would deliver %d records in fail mode and first report %s "
                          "for record %d at offset %d.)" % (len(stream), zerr, d_fail, kind, record, offset))
        else:
            # simulate() reports decode errors at the frame start; the manifest gives the field's byte
            frame_at = c["offset"] if c["kind"] != "decode_error" else \
                c["payload_offset"] - (12 if c["framing"] == "tfrecord" else 8)
            assert (kind, record, offset, d_fail) == (c["kind"], c["record"], frame_at, c["records_before"]), (
                c["file"], e_fail, d_fail)
            if c["skip_delivered"] is not None:
                assert d_skip == c["skip_delivered"], (c["file"], d_skip, e_skip)
            assert e_skip[0] == e_fail[0]
        if c["kind"] == "compression_error":
            assert zerr is not None, c["file"]
        c["size"] = len(c["data"])
        c["sha256"] = sha256(c["data"])
        if c["framing"] == "tfrecord":
            got, err = tf_read(path, c["compression"])
            said = " TensorFlow %s: TFRecordDataset delivers %d records" % (tf.__version__, len(got))
            if err:
                said += ", then %s." % err
            elif c["kind"] == "truncated_header":
                said += " and reports no error (it takes a partial header at the end for the end of the file)."
            elif c["kind"] == "decode_error":
                said += " and reports no error (it does not parse payloads)."
            else:
                said += " and reports no error."
            c["note"] += said
        else:
            c["note"] += " (Checked with this script's reader; TensorFlow does not read OFRecord.)"
        if c["kind"] == "decode_error":
            bad = simulate_payload(c)
            c["python_protobuf"] = parse_error(MESSAGE_TYPES[c["payload"]], bad)
            if c["payload"] == "example":
                c["tf_parse_single_example"] = tf_parse_error(bad)
    return cases


def simulate_payload(c):
    data = c["data"]
    hdr = 12 if c["framing"] == "tfrecord" else 8
    po = c["payload_offset"]
    (length,) = struct.unpack_from("<Q" if hdr == 12 else "<q", data, po - hdr)
    return data[po:po + length]


def parse_error(cls, payload):
    try:
        cls.FromString(payload)
        return "parses without error"
    except Exception as e:  # noqa: BLE001
        return "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])


def tf_parse_error(payload):
    try:
        out = tf.io.parse_single_example(payload, {"id": tf.io.VarLenFeature(tf.int64)})
        return "parses without error (id = %s)" % out["id"].values.numpy().tolist()
    except tf.errors.OpError as e:
        return "%s: %s" % (type(e).__name__, clean_tf_message(e.message)[:200])
    except UnicodeDecodeError:
        # TensorFlow's error message quotes the raw payload; decoding it as UTF-8 fails in Python
        return ("rejected: TensorFlow raised an error whose message quotes the raw payload bytes "
                "(surfacing in Python as UnicodeDecodeError)")


# --------------------------------------------------------------------------------------------
# cross-check with the upb runtime (run as a subprocess: the runtime is chosen at import)

def check_upb():
    result = {"protobuf": google.protobuf.__version__, "implementation": api_implementation.Type(),
              "records_checked": 0, "decode_errors": {}}
    with open(os.path.join(REF, "manifest.json"), encoding="utf-8") as f:
        ref = json.load(f)
    for entry in ref:
        if entry["jsonl"] is None:
            continue
        raw = read(os.path.join(TESTDATA, entry["file"]))
        stream = decompress(raw, entry["compression"])
        frames = tf_frames_strict(stream) if entry["framing"] == "tfrecord" else of_frames_strict(stream)
        with open(os.path.join(TESTDATA, entry["jsonl"]), encoding="utf-8") as f:
            lines = f.read().split("\n")
        assert lines[-1] == "" and len(lines) - 1 == len(frames), entry["file"]
        cls = MESSAGE_TYPES[entry["payload"]]
        for (_, p), line in zip(frames, lines):
            d = json_format.MessageToDict(cls.FromString(p), preserving_proto_field_name=True)
            assert canon(d) == canon(json.loads(line)), (entry["file"], line[:200])
            assert cls.FromString(p).SerializeToString(deterministic=True) == \
                parse_json_line(line, cls).SerializeToString(deterministic=True), (entry["file"], line[:200])
            result["records_checked"] += 1
    with open(os.path.join(BAD, "manifest.json"), encoding="utf-8") as f:
        bad = json.load(f)
    for c in bad:
        if c["kind"] == "decode_error":
            c["data"] = read(os.path.join(BAD, c["file"]))
            result["decode_errors"][c["file"]] = parse_error(MESSAGE_TYPES[c["payload"]], simulate_payload(c))
    print(json.dumps(result))


# --------------------------------------------------------------------------------------------

def main():
    if CHECK_UPB:
        check_upb()
        return
    ref_manifest = make_ref()
    with open(os.path.join(REF, "manifest.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(ref_manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")
    cases = make_bad()
    order = ["file", "framing", "compression", "payload", "kind", "record", "offset", "records_before",
             "skip_delivered", "note"]
    out = []
    for c in cases:
        c.pop("data")
        out.append({k: c[k] for k in order} | {k: v for k, v in c.items() if k not in order})
    path = os.path.join(BAD, "manifest.json")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    # upb cross-check; its decode errors go into the manifest
    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--check-upb"], check=True,
                         capture_output=True, text=True)
    upb = json.loads(res.stdout.strip().splitlines()[-1])
    assert upb["implementation"] == "upb"
    for c in out:
        if c["file"] in upb["decode_errors"]:
            c["upb_protobuf"] = upb["decode_errors"][c["file"]]
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("python %s, protobuf %s (%s; upb cross-check of %d records), tensorflow %s" % (
        sys.version.split()[0], google.protobuf.__version__, api_implementation.Type(),
        upb["records_checked"], tf.__version__))
    for d in (REF, BAD):
        for name in sorted(os.listdir(d)):
            print("%8d  %s" % (os.path.getsize(os.path.join(d, name)), rel(os.path.join(d, name))))


if __name__ == "__main__":
    main()
