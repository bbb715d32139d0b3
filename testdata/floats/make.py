#!/usr/bin/env python3
"""What protobuf's MessageToDict gives for float32 (and double) values, for
recordwire's test tests/decode/float_text.rs (docs/FORMAT.md §5.2).

Written with Python 3.11.7 and protobuf 7.36.2 from PyPI (`pip install
protobuf==7.36.2`; the upb implementation, `api_implementation.Type()` is
"upb"); no TensorFlow. The versions that ran are recorded in manifest.txt, and
the script refuses to overwrite the fixture with other versions unless given
--any-version.

    python3 testdata/floats/make.py             # rewrite manifest.txt and expected.txt.gz
    python3 testdata/floats/make.py --check     # recompute, compare with the files, write nothing
    python3 testdata/floats/make.py --full DIR  # also write every expected double (about 75 MB)

The values are printed the way MessageToDict prints them, through a message of
a dynamic type (no .proto file, no generated code):

    message FloatList { repeated float value = 1 [packed = true]; repeated double d = 2; }

built from a FileDescriptorProto with descriptor_pool and message_factory. The
bit patterns go in as wire bytes (one packed field), and
`json_format.MessageToDict(msg, preserving_proto_field_name=True)` gives the
values: a Python float (a double) for each finite value, the strings "NaN",
"Infinity", "-Infinity" otherwise. For a float field that double is
`type_checkers.ToShortestFloat(value)`: the first of %.6g, %.7g, %.8g, %.9g
that reads back (through struct '<f') as the same float32.

The sets, in this order:

- `random`: COUNT bit patterns from SplitMix64 seeded with SEED_F32: each
  output's low 32 bits, NaN and infinity patterns included.
- `denormal`: every positive denormal, bit patterns 0x00000001 to 0x007fffff
  in increasing order.
- `special`: zeros, NaNs, infinities, every power of two with its neighbours,
  the float32 nearest each power of ten with its neighbours, the extremes, the
  values quoted in the issue, exact ties (a float32 whose exact decimal
  expansion has a 5 right after the 6th, 7th, 8th or 9th significant digit,
  then nothing) and their neighbours, and a sample of negative denormals.
- `double`: DOUBLE_COUNT 64-bit patterns from SplitMix64 seeded with SEED_F64,
  and special doubles, through the `d` field (MessageToDict gives a double as
  it is, which JSON shows with repr: the shortest round trip).

manifest.txt holds the parameters, the versions, the counts and, for
`random` and for each of the DENORMAL_PARTS consecutive parts of `denormal`,
the SHA-256 of the expected values: for each value in order, 8 bytes
little-endian, the bits of the double MessageToDict gave, NaN as
0x7ff8000000000000 (any NaN prints as "NaN"), the infinities as themselves.

expected.txt.gz holds, for a subset, one line per value:
`SET INDEX BITS TEXT`, with INDEX the position in the set, BITS the bit pattern
in hex (8 digits for float32, 16 for a double) and TEXT the value as
json.dumps writes what MessageToDict gave (`1.4013e-45`, `3.4028235e+38`,
`"NaN"`). The subset is every `special` and `double` value; the first
RANDOM_PREFIX `random` values and every other `random` value that a
shortest-digits printer may print as another number (see may_differ); and
for `denormal` the first and last DENORMAL_EDGE and every DENORMAL_STRIDE-th.
"""

import argparse
import gzip
import hashlib
import io
import json
import math
import os
import platform
import struct
import sys
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal

import google.protobuf
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.internal import api_implementation

HERE = os.path.dirname(os.path.abspath(__file__))

SEED_F32 = 0x7265636F72647769  # "recordwi" in ASCII
SEED_F64 = 0x7265636F72647770
COUNT = 1 << 20  # 1,048,576 random float32 bit patterns
DOUBLE_COUNT = 2_000
RANDOM_PREFIX = 20_000
DENORMAL_EDGE = 1024
DENORMAL_STRIDE = 1021
DENORMAL_PARTS = 4
CHUNK = 1 << 16  # values per message

WRITTEN_WITH = {"python": "3.11.7", "protobuf": "7.36.2", "implementation": "upb"}

M64 = (1 << 64) - 1
CANONICAL_NAN = 0x7FF8000000000000


def splitmix64(seed):
    """SplitMix64 (Steele, Lea, Flood 2014), as in Java's SplittableRandom."""
    state = seed & M64
    while True:
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        yield z ^ (z >> 31)


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def to_f32(x):
    """A double rounded to float32, as protobuf's TruncateToFourByteFloat
    (but infinite where struct refuses a value beyond the float32 range)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f64(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


# ---------------------------------------------------------------------------
# MessageToDict through a dynamic message type
# ---------------------------------------------------------------------------


def float_list_class():
    fdp = descriptor_pb2.FileDescriptorProto(
        name="recordwire_floats.proto", package="recordwire_floats", syntax="proto3"
    )
    msg = fdp.message_type.add(name="FloatList")
    F = descriptor_pb2.FieldDescriptorProto
    value = msg.field.add(name="value", number=1, type=F.TYPE_FLOAT, label=F.LABEL_REPEATED)
    value.options.packed = True
    msg.field.add(name="d", number=2, type=F.TYPE_DOUBLE, label=F.LABEL_REPEATED)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("recordwire_floats.FloatList"))


FLOAT_LIST = float_list_class()


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def message_to_dict(field, fmt, bits_list):
    """MessageToDict's values for these bit patterns, in order (field 1 float
    with fmt '<I', field 2 double with fmt '<Q'), read from wire bytes."""
    out = []
    number = 1 if field == "value" else 2
    for start in range(0, len(bits_list), CHUNK):
        chunk = bits_list[start : start + CHUNK]
        raw = struct.pack("<%d%s" % (len(chunk), fmt[1]), *chunk)
        wire = varint(number << 3 | 2) + varint(len(raw)) + raw
        msg = FLOAT_LIST.FromString(wire)
        d = json_format.MessageToDict(msg, preserving_proto_field_name=True)
        values = d.get(field, [])
        assert len(values) == len(chunk), (field, len(values), len(chunk))
        out.extend(values)
    return out


def expected_bits(v):
    """The 64 bits hashed for one MessageToDict value."""
    if isinstance(v, str):
        return {"NaN": CANONICAL_NAN, "Infinity": f64_bits(math.inf), "-Infinity": f64_bits(-math.inf)}[v]
    assert isinstance(v, float), v
    return f64_bits(v)


def digest(values):
    h = hashlib.sha256()
    h.update(b"".join(struct.pack("<Q", expected_bits(v)) for v in values))
    return h.hexdigest()


# ---------------------------------------------------------------------------
# Which random values to store in full
# ---------------------------------------------------------------------------


def may_differ(bits, got):
    """Whether a shortest-digits printer may print this float32 as another
    number than MessageToDict's `got`: the shortest decimals that read back
    (through a double) are found among the two correctly directed roundings
    at 1, 2, ... 9 digits; the value is kept when `got` is not the nearest of
    them, or when two of them are equally near (a tie)."""
    x = f32(bits)
    if not math.isfinite(x) or x == 0.0:
        return False
    exact = Decimal(x)
    for p in range(1, 10):
        cands = set()
        for rounding in (ROUND_FLOOR, ROUND_CEILING):
            c = Context(prec=p, rounding=rounding).plus(exact)
            if to_f32(float(c)) == x:
                cands.add(c)
        if cands:
            best = min(abs(c - exact) for c in cands)
            nearest = [c for c in cands if abs(c - exact) == best]
            return len(nearest) > 1 or float(nearest[0]) != got
    return True


# ---------------------------------------------------------------------------
# The special float32 values
# ---------------------------------------------------------------------------


def chosen_precision(x):
    for p in range(6, 10):
        if to_f32(float("%.*g" % (p, x))) == x:
            return p
    raise AssertionError(x)


def tie_candidates():
    """Float32 values m / 2^k (m odd) and D * 10^j whose exact decimal
    expansion has p+1 significant digits, the last a 5: a tie when rounded to
    p digits, for p = 6..9. For each family, up to 40 where MessageToDict stops
    at that p (the tie's rounding reads back, so ties-to-even shows) and 5
    where it does not, sampled evenly from the odd m (or D) that qualify."""
    out = []

    def sample(lo, hi, step):
        n = (hi - lo) // step + 1
        if n <= 0:
            return []
        # 4000 evenly spaced candidates at most, deterministic.
        want = min(n, 4000)
        return [lo + ((i * n) // want) * step for i in range(want)]

    for p in (6, 7, 8, 9):
        # Fractions: x = m / 2^k, exact decimal m * 5^k / 10^k, last digit 5.
        for k in range(1, 15):
            f5 = 5**k
            lo = max(-(-(10**p) // f5), 1)
            hi = min((10 ** (p + 1) - 1) // f5, (1 << 24) - 1)
            lo |= 1
            relevant, other = [], []
            for m in sample(lo, hi, 2):
                if m % 2 == 0:
                    continue
                x = m / (1 << k)
                bits = f32_bits(x)
                assert f32(bits) == x
                if chosen_precision(x) == p:
                    if len(relevant) < 40:
                        relevant.append(bits)
                elif len(other) < 5:
                    other.append(bits)
            out += relevant + other
        # Integers: x = D * 10^j, D ending in 5 with p+1 digits, exact in float32.
        for j in (0, 1):
            lo = 10**p + 5
            hi = min(10 ** (p + 1) - 5, ((1 << 24) - 1) // 5**j)
            picked = 0
            for d in sample(lo, hi, 10):
                x = float(d * 10**j)
                if to_f32(x) != x:
                    continue
                out.append(f32_bits(x))
                picked += 1
                if picked == 20:
                    break
    return out


def special_bits():
    s = []
    # Zeros, NaNs, infinities.
    s += [0x00000000, 0x80000000, 0x7F800000, 0xFF800000]
    s += [0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FBFFFFF]
    # The extremes.
    s += [0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x80800000, 0x007FFFFF, 0x807FFFFF, 0x00000001, 0x80000001]
    # The values quoted in the issue, and the double-rounding case of
    # tests/write/encode_properties.rs.
    for x in (1e-45, 356370.12, -2566554.3, -52277.813, 7.0385307e-26, -7.0385307e-26):
        s.append(f32_bits(x))
    s += [0x15AE43FD, 0x95AE43FD, 0x15AE43FE]
    # Every power of two (denormal and normal), its neighbours, both signs.
    for e in range(-149, 128):
        b = f32_bits(2.0**e)
        for n in (b - 1, b, b + 1):
            if 0 < n < 0x7F800000:
                s += [n, n | 0x80000000]
    # The float32 nearest each power of ten, with two neighbours each side.
    for e in range(-45, 39):
        try:
            b = f32_bits(float("1e%d" % e))
        except OverflowError:
            continue
        for n in range(b - 2, b + 3):
            if 0 < n < 0x7F800000:
                s += [n, n | 0x80000000]
    # Integers around 2^24 and the fixed/exponent thresholds of repr.
    for x in (16777216.0, 16777218.0, 1e16, 1e-4, 1e-5, 1.0, 0.1, 0.5, 3.1415927, 65504.0):
        b = f32_bits(x)
        s += [b - 1, b, b + 1]
    # Exact ties and their neighbours.
    for b in tie_candidates():
        s += [b, b ^ 0x80000000]
        s += [b - 1, b + 1]
    # Negative denormals, sampled.
    s += [0x80000000 | b for b in range(1, 0x800000, 4099)]
    # Once each, in first-seen order.
    seen, out = set(), []
    for b in s:
        b &= 0xFFFFFFFF
        if b not in seen:
            seen.add(b)
            out.append(b)
    return out


def double_bits():
    gen = splitmix64(SEED_F64)
    s = [next(gen) for _ in range(DOUBLE_COUNT)]
    for x in (
        0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
        2.225073858507201e-308, 1.7976931348623157e308, 0.1, 1 / 3, 2 / 3, 1.0, 0.5, 1e16,
        9999999999999998.0, 1e-4, 9.999999999999999e-05, 1e-5, 1e22, 1e23, 9007199254740993.0,
        123456789012345680.0, 3.4028234663852886e38, 1.401298464324817e-45,
    ):
        s.append(f64_bits(x))
    for e in range(-1074, 1024, 7):
        s.append(f64_bits(2.0**e))
    return s


# ---------------------------------------------------------------------------


def text(v):
    return json.dumps(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the stored files, write nothing")
    ap.add_argument("--full", metavar="DIR", help="also write every expected double of random and denormal")
    ap.add_argument("--any-version", action="store_true", help="run with other Python/protobuf versions")
    args = ap.parse_args()

    versions = {
        "python": platform.python_version(),
        "protobuf": google.protobuf.__version__,
        "implementation": api_implementation.Type(),
    }
    if versions != WRITTEN_WITH and not args.any_version:
        sys.exit("versions %s differ from %s; pass --any-version to run anyway" % (versions, WRITTEN_WITH))

    # The quoted MessageToDict numbers of the issue, as a sanity check.
    quoted = message_to_dict("value", "<I", [1, f32_bits(356370.12), f32_bits(-2566554.3), f32_bits(-52277.813)])
    assert [text(v) for v in quoted] == ["1.4013e-45", "356370.12", "-2566554.2", "-52277.812"], quoted

    lines = []
    manifest = [
        "# What MessageToDict gives for float32 and double values; written by make.py (see its docstring).",
        "python = %s" % versions["python"],
        "protobuf = %s" % versions["protobuf"],
        "implementation = %s" % versions["implementation"],
        "generator = splitmix64",
    ]

    # random
    gen = splitmix64(SEED_F32)
    rbits = [next(gen) & 0xFFFFFFFF for _ in range(COUNT)]
    rvals = message_to_dict("value", "<I", rbits)
    kept = 0
    for i, (b, v) in enumerate(zip(rbits, rvals)):
        if i < RANDOM_PREFIX or (isinstance(v, float) and may_differ(b, v)):
            lines.append("random %d %08x %s" % (i, b, text(v)))
            kept += 1
    manifest += [
        "random.seed = 0x%016x" % SEED_F32,
        "random.count = %d" % COUNT,
        "random.sha256 = %s" % digest(rvals),
        "random.stored = %d" % kept,
    ]
    print("random: %d values, %d stored" % (COUNT, kept), file=sys.stderr)

    # denormal
    dbits = list(range(1, 0x800000))
    dvals = message_to_dict("value", "<I", dbits)
    kept = 0
    for i, (b, v) in enumerate(zip(dbits, dvals)):
        if i < DENORMAL_EDGE or i >= len(dbits) - DENORMAL_EDGE or i % DENORMAL_STRIDE == 0:
            lines.append("denormal %d %08x %s" % (i, b, text(v)))
            kept += 1
    manifest += ["denormal.first = 0x00000001", "denormal.count = %d" % len(dbits)]
    # In DENORMAL_PARTS parts of (nearly) equal length, so that the test can
    # check them in parallel: part k is indices [k*n/parts, (k+1)*n/parts).
    manifest += ["denormal.parts = %d" % DENORMAL_PARTS]
    for k in range(DENORMAL_PARTS):
        a, b = k * len(dbits) // DENORMAL_PARTS, (k + 1) * len(dbits) // DENORMAL_PARTS
        manifest += ["denormal.sha256.%d = %s" % (k, digest(dvals[a:b]))]
    manifest += ["denormal.stored = %d" % kept]
    print("denormal: %d values, %d stored" % (len(dbits), kept), file=sys.stderr)

    # special
    sbits = special_bits()
    svals = message_to_dict("value", "<I", sbits)
    for i, (b, v) in enumerate(zip(sbits, svals)):
        lines.append("special %d %08x %s" % (i, b, text(v)))
    manifest += ["special.count = %d" % len(sbits)]
    print("special: %d values" % len(sbits), file=sys.stderr)

    # double
    fbits = double_bits()
    fvals = message_to_dict("d", "<Q", fbits)
    for i, (b, v) in enumerate(zip(fbits, fvals)):
        assert isinstance(v, str) or f64_bits(v) == b, (hex(b), v)  # doubles come out as they are
        lines.append("double %d %016x %s" % (i, b, text(v)))
    manifest += ["double.seed = 0x%016x" % SEED_F64, "double.count = %d" % len(fbits)]
    print("double: %d values" % len(fbits), file=sys.stderr)

    manifest_text = "\n".join(manifest) + "\n"
    body = ("\n".join(lines) + "\n").encode()
    buf = io.BytesIO()
    # mtime=0 and no file name: the same bytes on every run.
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9, mtime=0, filename="") as z:
        z.write(body)

    mpath = os.path.join(HERE, "manifest.txt")
    epath = os.path.join(HERE, "expected.txt.gz")
    if args.check:
        ok = True
        with open(mpath) as f:
            if f.read() != manifest_text:
                print("manifest.txt differs", file=sys.stderr)
                ok = False
        with gzip.open(epath) as f:
            if f.read() != body:
                print("expected.txt.gz differs", file=sys.stderr)
                ok = False
        sys.exit(0 if ok else 1)
    with open(mpath, "w") as f:
        f.write(manifest_text)
    with open(epath, "wb") as f:
        f.write(buf.getvalue())
    if args.full:
        os.makedirs(args.full, exist_ok=True)
        for name, vals in (("random", rvals), ("denormal", dvals)):
            with open(os.path.join(args.full, name + ".f64"), "wb") as f:
                f.write(b"".join(struct.pack("<Q", expected_bits(v)) for v in vals))
    print("wrote %s (%d bytes), %s" % (epath, len(buf.getvalue()), mpath), file=sys.stderr)


if __name__ == "__main__":
    main()
