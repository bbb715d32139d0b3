#!/usr/bin/env python3
"""Writes recordwire's hostile-input suite: testdata/bad/hostile/* and testdata/bad/hostile.json.

Python 3 standard library only, deterministic (no randomness, no time stamps, no zlib-version
dependence: the compressed files are written with this script's own deflate encoder, stored blocks
and fixed-Huffman blocks), so rerunning it gives byte-identical files:

    python3 testdata/gen/make_hostile.py

Every file is a small record file whose first records are valid, then one damaged or hostile record
(or frame), then, where the damage does not swallow them, more valid records. Each manifest entry says
what reading it must give (see testdata/README.md, section "bad/hostile/"): the outcome (an error
kind of docs/FORMAT.md §8.1 or "ok"), the record id and absolute byte offset of the error (in the
decompressed stream for compressed files), the records delivered before it (as JSON lines), the
records delivered in skip mode, and, for payload errors, the DecodeReason and where the payload is.

Offsets of payload errors follow what recordwire reports and testdata/bad/manifest.json documents:
the first byte (the tag) of the malformed field; a group nested too deep, at the tag of the first
group past the limit; an unterminated group, at its start tag; a crossed group, at the end tag
that closes the wrong group. Two places point at the offending bytes themselves instead: a bad
varint inside a packed run (at that varint; the run's tag is `field_offset`), and a feature name
that is not UTF-8 (at the name's first byte; the key field's tag is `field_offset`).
"""

import base64
import hashlib
import json
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from wire import masked_crc, tag, tf_frame, tf_header, varint  # noqa: E402

GEN = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.dirname(GEN)
BAD = os.path.join(TESTDATA, "bad")
OUT_DIR = os.path.join(BAD, "hostile")
MANIFEST = os.path.join(BAD, "hostile.json")

MAX_DEPTH = 100  # Google's kDefaultRecursionLimit; the top-level message is depth 0.

# --------------------------------------------------------------------------------------------
# CRC32C and TFRecord's mask (docs/FORMAT.md §1.3)


def of_frame(data):
    return struct.pack("<q", len(data)) + data


# --------------------------------------------------------------------------------------------
# Protobuf wire pieces. A "part" is (bytes, mark): mark is the offset of the byte an error is
# expected at, or None. Parts compose, and the mark follows.


def raw(b, mark=None):
    return (bytes(b), mark)


def marked(b, at=0):
    return (bytes(b), at)


def cat(*parts):
    out, mark = b"", None
    for b, m in parts:
        if m is not None and mark is None:
            mark = len(out) + m
        out += b
    return (out, mark)


def ld(field, part):
    """A length-delimited field holding `part`."""
    b, m = part
    head = tag(field, 2) + varint(len(b))
    return (head + b, None if m is None else len(head) + m)


EMPTY = (b"", None)

# --------------------------------------------------------------------------------------------
# Records. Every record has the features "id" (int64 [i]), "name" (bytes [b"record i"]) and "w"
# (float [0.5]); OFRecord ones also "d" (double [0.25]). A hostile record puts its attack at one
# of these places (the nesting depth of the message that holds it, as recordwire and Google's
# parsers count it, is in DEPTH):
#
#   top       the record's top-level message (Example; for OFRecord, the map level)
#   features  tf.Example's Features message (after the entries)
#   entry     the map entry of "id" (after its key and value)
#   feature   the Feature of "id" (after its int64_list)
#   list      the Int64List of "id" (after its packed run)
#   packed    inside the packed run of "id" (after the value i)
#   float     the FloatList of "w" (after its packed run)
#   double    the DoubleList of "d" (OFRecord)
#
# "after_<place>" puts bytes right after the message of that place ends (in its parent).

TF, OF = "example", "ofrecord"
DEPTH = {
    TF: {"top": 0, "features": 1, "entry": 2, "feature": 3, "list": 4, "float": 4},
    OF: {"top": 0, "entry": 1, "feature": 2, "list": 3, "float": 3, "double": 3},
}
INT64_FIELD = {TF: 3, OF: 5}


def build(schema, i, extra=None, key=b"id", id_values=None, w_lists=None, replace_packed=None,
          entry_fields=None):
    """The payload of record i, with `extra` (place -> part) inserted. Returns (bytes, mark)."""
    x = dict(extra or {})
    get = lambda place: x.pop(place, EMPTY)  # noqa: E731
    ids = [i] if id_values is None else id_values
    packed = raw(b"".join(varint(v & (1 << 64) - 1) for v in ids))
    if replace_packed is not None:
        packed = replace_packed
    packed = cat(packed, get("packed"))
    id_list = cat(ld(1, packed), get("list"))
    id_feature = cat(ld(INT64_FIELD[schema], id_list), get("feature"))
    if entry_fields is None:
        id_entry = cat(ld(1, raw(key)), ld(2, id_feature), get("entry"))
    else:
        id_entry = cat(*entry_fields(id_feature), get("entry"))
    name_feature = ld(1, ld(1, raw(b"record %d" % i)))
    if w_lists is None:
        w_lists = [cat(ld(1, raw(struct.pack("<f", 0.5))), get("float"))]
    w_feature = cat(*[ld(2, lst) for lst in w_lists])
    entries = [cat(ld(1, id_entry), get("after_entry")),
               ld(1, cat(ld(1, raw(b"name")), ld(2, name_feature))),
               ld(1, cat(ld(1, raw(b"w")), ld(2, w_feature)))]
    if schema == OF:
        d_list = cat(ld(1, raw(struct.pack("<d", 0.25))), get("double"))
        entries.append(ld(1, cat(ld(1, raw(b"d")), ld(2, ld(3, d_list)))))
    if schema == TF:
        features = cat(*entries, get("features"))
        payload = cat(ld(1, features), get("top"))
    else:
        payload = cat(*entries, get("top"))
    assert not x, "unused places %s" % sorted(x)
    return payload


def record_json(schema, i, name=None, id_values=None, w_values=None, escaped=False):
    """The record as `recordwire cat` prints it (docs/FORMAT.md §5), as a JSON line."""
    ids = [i] if id_values is None else id_values
    feats = {}
    feats["id" if name is None else name] = {"int64_list": {"value": [str(v) for v in ids]}}
    feats["name"] = {"bytes_list": {"value": [base64.b64encode(b"record %d" % i).decode()]}}
    feats["w"] = {"float_list": {"value": [0.5] if w_values is None else w_values}}
    if schema == OF:
        feats["d"] = {"double_list": {"value": [0.25]}}
    obj = {"features": {"feature": feats}} if schema == TF else {"feature": feats}
    return json.dumps(obj, ensure_ascii=escaped, separators=(",", ":"))


def valid(schema, i):
    return build(schema, i)[0]


# --------------------------------------------------------------------------------------------
# Deflate, GZIP and ZLIB written here (stored and fixed-Huffman blocks), so that the compressed
# bytes do not depend on the zlib version.

def stored_blocks(data, block=1000, final=True):
    """Deflate stored blocks of at most `block` bytes (byte-aligned, so they can be spliced)."""
    out = bytearray()
    chunks = [data[i:i + block] for i in range(0, len(data), block)] or [b""]
    for k, c in enumerate(chunks):
        out.append(1 if final and k == len(chunks) - 1 else 0)
        out += struct.pack("<HH", len(c), len(c) ^ 0xFFFF)
        out += c
    return bytes(out)


class BitWriter:
    def __init__(self):
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def bits(self, value, count):  # LSB first
        self.acc |= value << self.n
        self.n += count
        while self.n >= 8:
            self.out.append(self.acc & 0xFF)
            self.acc >>= 8
            self.n -= 8

    def huff(self, code, length):  # Huffman codes go MSB first
        rev = int(format(code, "0%db" % length)[::-1], 2)
        self.bits(rev, length)

    def flush(self):
        if self.n:
            self.out.append(self.acc & 0xFF)
        self.acc = self.n = 0
        return bytes(self.out)


_LEN_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99,
             115, 131, 163, 195, 227, 258]
_LEN_EXTRA = [0] * 8 + [1] * 4 + [2] * 4 + [3] * 4 + [4] * 4 + [5] * 4 + [0]


def _fixed_symbol(w, sym):
    if sym < 144:
        w.huff(0x30 + sym, 8)
    elif sym < 256:
        w.huff(0x190 + sym - 144, 9)
    elif sym < 280:
        w.huff(sym - 256, 7)
    else:
        w.huff(0xC0 + sym - 280, 8)


def fixed_huffman(data):
    """One final fixed-Huffman block: literals, and runs of a repeated byte as matches at distance 1."""
    w = BitWriter()
    w.bits(1, 1)  # BFINAL
    w.bits(1, 2)  # BTYPE = 01, fixed Huffman
    i = 0
    while i < len(data):
        run = 0
        if i > 0:
            while i + run < len(data) and data[i + run] == data[i - 1] and run < 258:
                run += 1
        if run >= 3:
            k = max(j for j in range(len(_LEN_BASE)) if _LEN_BASE[j] <= run)
            if run == 258:
                k = 28
            _fixed_symbol(w, 257 + k)
            if _LEN_EXTRA[k]:
                w.bits(run - _LEN_BASE[k], _LEN_EXTRA[k])
            w.huff(0, 5)  # distance code 0: distance 1
            i += run
        else:
            _fixed_symbol(w, data[i])
            i += 1
    _fixed_symbol(w, 256)
    return w.flush()


assert zlib.decompress(fixed_huffman(b"ab" + b"c" * 1000 + b"\x0b" * 70000), -15) == (
    b"ab" + b"c" * 1000 + b"\x0b" * 70000)
assert zlib.decompress(stored_blocks(b"x" * 2500), -15) == b"x" * 2500

GZIP_HEADER = bytes([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 255])  # no flags, mtime 0, OS unknown
ZLIB_HEADER = bytes([0x78, 0x01])


def gzip_wrap(deflate, data):
    return GZIP_HEADER + deflate + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def zlib_wrap(deflate, data):
    return ZLIB_HEADER + deflate + struct.pack(">I", zlib.adler32(data))


def compress(kind, data, deflate=None):
    d = fixed_huffman(data) if deflate is None else deflate
    out = gzip_wrap(d, data) if kind == "gzip" else zlib_wrap(d, data)
    # What Python's zlib makes of it (a check of this script, not of recordwire).
    assert zlib.decompress(out, 31 if kind == "gzip" else 15) == data
    return out


# --------------------------------------------------------------------------------------------
# The manifest

ENTRIES = []
FILES = {}
EXT = {("tfrecord", "none"): ".tfrecord", ("ofrecord", "none"): ".ofrecord",
       ("tfrecord", "gzip"): ".tfrecord.gz", ("tfrecord", "zlib"): ".tfrecord.zlib"}
PREFIX = {("tfrecord", "none"): "tf", ("ofrecord", "none"): "of",
          ("tfrecord", "gzip"): "gz", ("tfrecord", "zlib"): "zlib"}


def add(name, data, framing, compression, payload, outcome, attack, note, *, record=None,
        offset=None, before=(), skip=None, reason=None, values=None, payload_range=None,
        field_offset=None, stream=None, auto=True):
    """One manifest entry. `before`: JSON lines delivered in fail mode (all of them for "ok");
    `skip`: JSON lines delivered in skip mode (None: not meaningful); `stream`: the decompressed
    stream (for compressed files)."""
    fname = "hostile/%s_%s%s" % (PREFIX[(framing, compression)], name, EXT[(framing, compression)])
    assert fname not in FILES, fname
    FILES[fname] = data
    e = {
        "file": fname,
        "framing": framing,
        "compression": compression,
        "payload": payload,
        "outcome": outcome,
        "attack": attack,
        "record": record,
        "offset": offset,
        "reason": reason,
        "records_before": len(before),
        "skip_delivered": None if skip is None else len(skip),
        "json_before": list(before),
        "json_skip": None if skip is None else list(skip),
    }
    if values is not None:
        e["values"] = values
    if payload_range is not None:
        e["payload_record"] = N_BEFORE
        e["payload_offset"], e["payload_len"] = payload_range
    if field_offset is not None:
        e["field_offset"] = field_offset
    if not auto:
        e["auto_detect"] = False
    e["note"] = note
    if stream is not None:
        e["decompressed_size"] = len(stream)
    e["size"] = len(data)
    e["sha256"] = hashlib.sha256(data).hexdigest()
    if outcome == "ok":
        assert record is None and offset is None and reason is None
    else:
        assert record is not None and offset is not None
    ENTRIES.append(e)


def resync(stream, start):
    """The first offset from `start` on where 12 bytes form a TFRecord header with a valid CRC."""
    for i in range(start, len(stream) - 11):
        if struct.unpack_from("<I", stream, i + 8)[0] == masked_crc(stream[i:i + 8]):
            return i
    return None


def frame_for(framing):
    return tf_frame if framing == "tfrecord" else of_frame


def schema_of(framing):
    return TF if framing == "tfrecord" else OF


# --------------------------------------------------------------------------------------------
# Payload attacks: one hostile record (id 3) between 3 valid ones before and 2 after.

N_BEFORE, N_AFTER = 3, 2


def payload_file(framing, name, attack, note, part, outcome, reason=None, good_json=None,
                 field_shift=None, compression="none"):
    """A file whose record 3 has payload `part` (bytes, mark). For "ok", `good_json` is record 3."""
    schema = schema_of(framing)
    frame = frame_for(framing)
    payload, mark = part
    stream = b"".join(frame(valid(schema, i)) for i in range(N_BEFORE))
    start = len(stream) + (12 if framing == "tfrecord" else 8)
    stream += frame(payload)
    stream += b"".join(frame(valid(schema, i)) for i in range(N_BEFORE + 1, N_BEFORE + 1 + N_AFTER))
    jsons = [record_json(schema, i) for i in range(N_BEFORE + 1 + N_AFTER)]
    data = stream if compression == "none" else compress(compression, stream)
    common = dict(payload_range=(start, len(payload)),
                  stream=None if compression == "none" else stream)
    if outcome == "ok":
        assert mark is None
        jsons[N_BEFORE] = good_json
        add(name, data, framing, compression, schema, "ok", attack, note, before=jsons, **common)
    else:
        assert mark is not None, name
        others = jsons[:N_BEFORE] + jsons[N_BEFORE + 1:]
        add(name, data, framing, compression, schema, "decode_error", attack, note,
            record=N_BEFORE, offset=start + mark, before=jsons[:N_BEFORE], skip=others,
            reason=reason, field_offset=None if field_shift is None else start + mark + field_shift,
            **common)


def places(schema, *wanted):
    return [p for p in wanted if p in DEPTH[schema]]


ALL = ("top", "features", "entry", "feature", "list")
F = 15  # an unknown field number everywhere, with one-byte tags for every wire type


def at(place, part, **more):
    d = {place: part}
    d.update(more)
    return d


def payload_attacks():
    for framing in ("tfrecord", "ofrecord"):
        s = schema_of(framing)
        lines = lambda **kw: record_json(s, N_BEFORE, **kw)  # noqa: E731
        rec = lambda **kw: build(s, N_BEFORE, **kw)  # noqa: E731

        def err(name, attack, note, part, reason, **kw):
            payload_file(framing, name, attack, note, part, "decode_error", reason, **kw)

        def ok(name, attack, note, part, good_json=None):
            payload_file(framing, name, attack, note, part, "ok",
                         good_json=good_json if good_json is not None else lines())

        # ---- 11-byte varints (and 10-byte ones, accepted)
        for p in places(s, *ALL):
            f = 1 if p == "list" else F  # in the list: the value field itself
            m = marked(tag(f, 0) + b"\x80" * 10 + b"\x00")
            err("varint11_" + p, "varint_11_bytes",
                "an 11-byte varint (10 bytes 0x80, then 0x00) as field %d (wire type 0) in the %s "
                "message of record 3; error at the field's tag" % (f, p), rec(extra=at(p, m)),
                "VarintTooLong")
        m = marked(b"\x80" * 10 + b"\x00")
        err("varint11_packed", "varint_11_bytes",
            "an 11-byte varint inside the packed run of 'id' (after the value 3); error at that "
            "varint, field_offset = the run's tag", rec(extra=at("packed", m)), "VarintTooLong",
            field_shift=-3)
        ten = b"\xff" * 9 + b"\x01"  # 2^64-1, ten bytes
        ten_dropped = b"\xff" * 9 + b"\x7f"  # bits past the 64th dropped: 2^64-1 again
        for p in places(s, "top", "feature"):
            ok("varint10_" + p, "varint_10_bytes",
               "10-byte varints (ff*9 01 and ff*9 7f: bits past the 64th are dropped) as unknown "
               "field %d in the %s message: valid" % (F, p),
               rec(extra=at(p, raw(tag(F, 0) + ten + tag(F, 0) + ten_dropped))))
        ok("varint10_list", "varint_10_bytes",
           "10-byte varints as unpacked values of 'id' (ff*9 01, ff*9 7f) and in its packed run "
           "(ff*9 7f): each is 2^64-1, i.e. -1",
           rec(extra=at("list", raw(tag(1, 0) + ten + tag(1, 0) + ten_dropped)),
               replace_packed=raw(varint(N_BEFORE) + ten_dropped)),
           lines(id_values=[N_BEFORE, -1, -1, -1]))

        # ---- 6-byte tags (and 5-byte overlong ones, accepted)
        for p in places(s, *ALL):
            m = marked(b"\xf8\x80\x80\x80\x80\x00" + b"\x00")
            err("tag6_" + p, "tag_6_bytes",
                "a 6-byte tag (f8 80 80 80 80 00: field %d, wire type 0, overlong) in the %s "
                "message" % (F, p), rec(extra=at(p, m)), "TagTooLong")
        ok("tag5_top", "tag_5_bytes",
           "a 5-byte overlong tag (f8 80 80 80 00: field %d varint) at the top level: valid" % F,
           rec(extra=at("top", raw(b"\xf8\x80\x80\x80\x00" + b"\x05"))))
        ok("tag5_list", "tag_5_bytes",
           "a 5-byte overlong tag (88 80 80 80 00: field 1 varint) for the value 7 of 'id'",
           rec(extra=at("list", raw(b"\x88\x80\x80\x80\x00" + b"\x07"))),
           lines(id_values=[N_BEFORE, 7]))

        # ---- 6-byte lengths (and 5-byte overlong ones), lengths of 2^31 and 2^31-1
        for p in places(s, *ALL):
            f = 1 if p == "list" else F
            m = marked(tag(f, 2) + b"\x81\x80\x80\x80\x80\x00" + b"x")
            err("len6_" + p, "length_6_bytes",
                "a 6-byte length (81 80 80 80 80 00) of field %d (wire type 2) in the %s message; "
                "error at the field's tag" % (f, p), rec(extra=at(p, m)), "LengthTooLong")
        ok("len5_list", "length_5_bytes",
           "a packed run of 'id' whose length 1 is written in 5 bytes (81 80 80 80 00): [7]",
           rec(extra=at("list", raw(tag(1, 2) + b"\x81\x80\x80\x80\x00" + b"\x07"))),
           lines(id_values=[N_BEFORE, 7]))
        ok("len5_top", "length_5_bytes",
           "an unknown length-delimited field whose length 1 is written in 5 bytes: valid",
           rec(extra=at("top", raw(tag(F, 2) + b"\x81\x80\x80\x80\x00" + b"x"))))
        for p in places(s, "top", "feature"):
            m = marked(tag(F, 2) + b"\x80\x80\x80\x80\x08" + b"x")
            err("len2p31_" + p, "length_2^31",
                "field %d declares 2^31 bytes (80 80 80 80 08): above 2^31-1" % F,
                rec(extra=at(p, m)), "LengthTooLong")
            m = marked(tag(F, 2) + b"\xff\xff\xff\xff\x07" + b"x")
            err("len2p31m1_" + p, "length_past_parent",
                "field %d declares 2^31-1 bytes (ff ff ff ff 07), 1 follows in its message: a "
                "length past the parent that must not be allocated" % F, rec(extra=at(p, m)),
                "LengthOverrun { declared: 2147483647, available: 1 }")

        # ---- lengths running past their parent message (but not past the record, nor the file)
        for p in places(s, *ALL):
            f = 1 if p == "list" else F
            m = marked(tag(f, 2) + varint(5) + b"\x01\x02")
            err("overrun_" + p, "length_past_parent",
                "the last field of the %s message (field %d, wire type 2) declares 5 bytes, 2 are "
                "left in that message (more bytes follow in its parents%s)"
                % (p, f, " and in the next frame" if p == "top" else ""),
                rec(extra=at(p, m)), "LengthOverrun { declared: 5, available: 2 }")
        # the map entry itself runs past Features / the OFRecord (into the next entries' bytes)
        if s == TF:
            # Features holds only entry "id", declaring 3 bytes more than it has; Example's
            # unknown field 15 after Features holds those bytes.
            body = build(s, N_BEFORE)[0]
            feats = _features_of(body)
            first = _first_field(feats)
            entry_len = len(first) - 2
            bad = marked(b"\x0a" + varint(entry_len + 3) + first[2:])
            part = cat(ld(1, bad), raw(tag(F, 2) + b"\x03abc"))
            err("overrun_features_entry", "length_past_parent",
                "Features holds one entry ('id') whose length says 3 bytes more than Features "
                "has; the Example goes on after Features (field %d), so the bytes exist" % F,
                part, "LengthOverrun { declared: %d, available: %d }" % (entry_len + 3, entry_len))

        # ---- wire types 6 and 7
        for wt in (6, 7):
            for p in places(s, *ALL):
                f = 1 if p == "list" else F
                m = marked(tag(f, wt) + b"\x01")
                err("wiretype%d_%s" % (wt, p), "wire_type_%d" % wt,
                    "a tag with field %d and wire type %d in the %s message" % (f, wt, p),
                    rec(extra=at(p, m)), "InvalidWireType(%d)" % wt)

        # ---- field number 0, and 2^29 (above 2^29-1); 2^29-1 is accepted
        for p in places(s, *ALL):
            err("field0_" + p, "field_number_0",
                "tag 0x00 (field 0, wire type 0), then 0x01, in the %s message" % p,
                rec(extra=at(p, marked(b"\x00\x01"))), "FieldNumberZero")
        err("field0_len_top", "field_number_0",
            "tag 0x02 (field 0, wire type 2) with an empty value, at the top level",
            rec(extra=at("top", marked(b"\x02\x00"))), "FieldNumberZero")
        for p in places(s, *ALL):
            m = marked(varint((1 << 29) << 3) + b"\x01")
            err("field2p29_" + p, "field_number_2^29",
                "field number 2^29 (tag 80 80 80 80 10 = 2^32, wire type 0) in the %s message: "
                "the tag does not fit in 32 bits" % p, rec(extra=at(p, m)), "TagTooLong")
        for p in places(s, "top", "feature", "list"):
            ok("field2p29m1_" + p, "field_number_2^29-1",
               "field number 2^29-1 (tag f8 ff ff ff 0f, wire type 0), the largest, in the %s "
               "message: an unknown field, skipped" % p,
               rec(extra=at(p, raw(varint(((1 << 29) - 1) << 3) + b"\x01"))))

        # ---- groups: unterminated, crossed, stray end
        parents = {"features": "top", "entry": "after_entry", "feature": "entry", "list": "feature"}
        for p in places(s, *ALL):
            m = marked(tag(F, 3) + tag(1, 0) + b"\x01")
            extra = at(p, m)
            where = "the end of the record"
            if p in parents and parents[p] in DEPTH[s] | {"after_entry": 0}:
                extra[parents[p]] = raw(tag(F, 4))
                where = "its message's end; the end tag 0x%02x follows right after that message" % (
                    (F << 3) | 4)
            err("group_unterminated_" + p, "group_unterminated",
                "group %d opened as the last field of the %s message, not closed before %s"
                % (F, p, where), rec(extra=extra), "UnterminatedGroup(%d)" % F)
        for p in places(s, *ALL):
            m = marked(tag(1, 3) + tag(2, 3) + tag(1, 4) + tag(2, 4), 2)
            err("group_crossed_" + p, "group_crossed",
                "start group 1, start group 2, end group 1, end group 2 in the %s message; "
                "error at the end tag of group 1" % p, rec(extra=at(p, m)),
                "UnexpectedEndGroup(1)")
        for p in places(s, "top", "feature"):
            err("group_stray_end_" + p, "group_stray_end",
                "an end-group tag (field %d) with no group open, in the %s message" % (F, p),
                rec(extra=at(p, marked(tag(F, 4)))), "UnexpectedEndGroup(%d)" % F)
        ok("group_nested_ok_top", "group_valid",
           "properly nested unknown groups with fields of every wire type inside, at the top level",
           rec(extra=at("top", raw(tag(F, 3) + tag(1, 0) + b"\x01" + tag(2, 1) + b"\x00" * 8
                                   + tag(3, 2) + b"\x02ab" + tag(4, 5) + b"\x00" * 4 + tag(5, 3)
                                   + tag(5, 4) + tag(F, 4)))))

        # ---- nesting: 100 levels in all (accepted), 101 (error), 100 000 (error, no stack overflow)
        for p in places(s, *ALL):
            d = DEPTH[s][p]
            n_ok, n_bad = MAX_DEPTH - d, MAX_DEPTH - d + 1
            ok("nest100_" + p, "nesting_100",
               "%d nested groups (field %d) in the %s message (depth %d): the innermost is at "
               "depth 100, the limit: valid" % (n_ok, F, p, d),
               rec(extra=at(p, raw(tag(F, 3) * n_ok + tag(F, 4) * n_ok))))
            m = marked(tag(F, 3) * n_bad + tag(F, 4) * n_bad, n_bad - 1)
            err("nest101_" + p, "nesting_101",
                "%d nested groups in the %s message (depth %d): the innermost is at depth 101; "
                "error at its start tag" % (n_bad, p, d), rec(extra=at(p, m)),
                "DepthLimitExceeded")
        for p in places(s, "top", "list"):
            d = DEPTH[s][p]
            n = 100_000
            m = marked(tag(F, 3) * n + tag(F, 4) * n, MAX_DEPTH - d)
            err("nest100000_" + p, "nesting_100000",
                "100 000 nested groups in the %s message (depth %d); error at the start tag of "
                "the first group past depth 100" % (p, d), rec(extra=at(p, m)),
                "DepthLimitExceeded")

        # ---- packed fixed-width runs whose length is not a multiple of the width
        one = struct.pack("<f", 0.5)
        err("packed_float5_single", "packed_float_length",
            "the float_list of 'w' is one packed run of 5 bytes (0.5f and a stray byte), alone "
            "in its message; error at the run's tag",
            rec(w_lists=[cat(marked(b""), ld(1, raw(one + b"\x00")))]),
            "PackedLength { length: 5, width: 4 }")
        err("packed_float3_after", "packed_float_length",
            "the float_list of 'w': a valid packed run [0.5], then a packed run of 3 bytes",
            rec(extra=at("float", marked(tag(1, 2) + b"\x03\x00\x00\x80"))),
            "PackedLength { length: 3, width: 4 }")
        err("packed_float7_merged", "packed_float_length",
            "'w' holds float_list twice (merged, as protobuf does): [0.5], then a list whose "
            "packed run is 7 bytes; error at that run's tag",
            rec(w_lists=[ld(1, raw(one)), cat(marked(b""), ld(1, raw(one + b"\x00\x00\x80")))]),
            "PackedLength { length: 7, width: 4 }")
        ok("packed_float_mixed_ok", "packed_float_length",
           "the float_list of 'w': packed [0.5], unpacked 0.25, packed [1.0, 2.0]: valid",
           rec(extra=at("float", raw(tag(1, 5) + struct.pack("<f", 0.25) + tag(1, 2) + b"\x08"
                                     + struct.pack("<ff", 1.0, 2.0)))),
           lines(w_values=[0.5, 0.25, 1.0, 2.0]))
        if s == OF:
            d8 = struct.pack("<d", 0.25)
            err("packed_double12_after", "packed_double_length",
                "the double_list of 'd': a valid packed run [0.25], then a packed run of 12 bytes",
                rec(extra=at("double", marked(tag(1, 2) + b"\x0c" + d8 + b"\x00" * 4))),
                "PackedLength { length: 12, width: 8 }")
            err("packed_double4_after", "packed_double_length",
                "the double_list of 'd': [0.25], then a packed run of 4 bytes",
                rec(extra=at("double", marked(tag(1, 2) + b"\x04" + b"\x00" * 4))),
                "PackedLength { length: 4, width: 8 }")

        # ---- values running past their parent (truncated inside a message)
        for p in places(s, "top", "feature", "list"):
            for what, body in (("fixed64", tag(F, 1) + b"\x01\x02\x03"),
                               ("fixed32", tag(F, 5) + b"\x01"),
                               ("varint", tag(F, 0) + b"\x80")):
                err("truncated_%s_%s" % (what, p), "value_past_parent",
                    "a %s field (%d) is the last field of the %s message and its value runs past "
                    "the message's end" % (what, F, p), rec(extra=at(p, marked(body))),
                    "Truncated")

        # ---- feature names that are not UTF-8: an error in tf.Example (proto3), fine in OFRecord
        names = [("ff", b"id\xff", "a byte 0xff"),
                 ("overlong", b"id\xc0\x80", "an overlong encoding of NUL (c0 80)"),
                 ("surrogate", b"id\xed\xa0\x80", "an encoded surrogate (ed a0 80)"),
                 ("truncated", b"id\xe2\x82", "a 3-byte sequence cut after 2 bytes (e2 82)")]
        for tag_name, key, what in names:
            part = rec(key=key)
            key_at = _key_offset(part[0], key)
            if s == TF:
                err("utf8_" + tag_name, "invalid_utf8_name",
                    "the name of feature 'id' has %s: not UTF-8, invalid in proto3; error at the "
                    "name's first byte (field_offset: the key field's tag)" % what,
                    (part[0], key_at), "InvalidUtf8", field_shift=-2)
            else:
                ok("utf8_" + tag_name, "invalid_utf8_name",
                   "the name of feature 'id' has %s: OFRecord is proto2, names are bytes: valid "
                   "(printed with \\udcXX escapes)" % what, part,
                   lines(name=key.decode("utf-8", "surrogateescape"), escaped=True))
        # the key after the value (the entry read field by field), and a bad key replaced by a good one
        bad = b"id\xff"

        def key_last(feature):
            return [ld(2, feature), ld(1, raw(bad))]

        def key_twice(feature):
            return [ld(1, raw(bad)), ld(2, feature), ld(1, raw(b"id"))]

        for tag_name, shape, how in (("key_last", key_last, "after the value"),
                                     ("key_replaced", key_twice,
                                      "then the value, then a valid key 'id' (the last key wins, "
                                      "but every occurrence is parsed)")):
            part = rec(entry_fields=shape)
            key_at = _key_offset(part[0], bad)
            if s == TF:
                err("utf8_" + tag_name, "invalid_utf8_name",
                    "the entry of 'id' has its key 'id\\xff' %s; error at the bad key's first "
                    "byte" % how, (part[0], key_at), "InvalidUtf8", field_shift=-2)
            else:
                good = lines(name="id\udcff", escaped=True) if tag_name == "key_last" else lines()
                ok("utf8_" + tag_name, "invalid_utf8_name",
                   "the entry of 'id' has its key 'id\\xff' %s: valid in OFRecord" % how, part,
                   good)


def _first_field(msg):
    """The first field (tag, length, value) of a message whose first field is length-delimited."""
    assert msg[0] & 7 == 2
    n, k = _read_varint(msg, 1)
    return msg[:k + n]


def _features_of(example):
    assert example[0] == 0x0A
    n, k = _read_varint(example, 1)
    return example[k:k + n]


def _read_varint(b, i):
    v, s = 0, 0
    while True:
        v |= (b[i] & 0x7F) << s
        s += 7
        i += 1
        if b[i - 1] < 0x80:
            return v, i


def _key_offset(payload, key):
    needle = bytes([len(key)]) + key
    i = payload.find(needle)
    assert i > 0 and payload.find(needle, i + 1) < 0
    return i + 1


# --------------------------------------------------------------------------------------------
# Framing damage: 3 valid records, the damaged frame (id 3), then (where the damage leaves them
# reachable) 2 valid records.


def framing_attacks(compression="none"):
    kinds = [("tfrecord", "none"), ("ofrecord", "none")] if compression == "none" else [
        ("tfrecord", compression)]
    for framing, comp in kinds:
        s = schema_of(framing)
        frame = frame_for(framing)
        hl = 12 if framing == "tfrecord" else 8
        head = b"".join(frame(valid(s, i)) for i in range(N_BEFORE))
        tail = b"".join(frame(valid(s, i)) for i in range(N_BEFORE + 1, N_BEFORE + 1 + N_AFTER))
        jsons = [record_json(s, i) for i in range(N_BEFORE + 1 + N_AFTER)]
        before = jsons[:N_BEFORE]
        others = jsons[:N_BEFORE] + jsons[N_BEFORE + 1:]
        d3 = valid(s, N_BEFORE)
        f3 = frame(d3)
        o = len(head)

        def put(name, stream, kind, attack, note, skip, values=None, auto=True):
            data = stream if comp == "none" else compress(comp, stream)
            add(name, data, framing, comp, s, kind, attack, note, record=N_BEFORE, offset=o,
                before=before, skip=skip, values=values,
                stream=None if comp == "none" else stream, auto=auto)
            if kind in ("length_crc_mismatch", "data_crc_mismatch"):
                # Skip mode passes over [o, next): after a data CRC error the frame; after a
                # length CRC error up to the first 12 bytes that form a valid header.
                nxt = o + len(f3) if kind == "data_crc_mismatch" else resync(stream, o + 1)
                assert nxt == o + len(f3), (name, nxt)
                ENTRIES[-1]["skipped"] = [o, nxt]

        for cut in (1, 5, hl - 1):
            put("truncated_header_%d" % cut, head + f3[:cut], "truncated_header", "truncated_header",
                "the input ends %d byte(s) into the %d-byte header of frame 3" % (cut, hl),
                before, {"needed": hl, "available": cut})
        cut = hl + len(d3) // 2
        put("truncated_data", head + f3[:cut], "truncated_data", "truncated_data",
            "the input ends in the middle of frame 3's data (%d bytes declared, %d present)"
            % (len(d3), cut - hl), before,
            {"declared": len(d3) + (4 if framing == "tfrecord" else 0), "available": cut - hl})
        if framing == "tfrecord":
            cut = hl + len(d3) + 2
            put("truncated_data_crc", head + f3[:cut], "truncated_data", "truncated_data",
                "the input ends 2 bytes into frame 3's data CRC", before,
                {"declared": len(d3) + 4, "available": cut - hl})
            for name, length, what in (("len_2p40", 1 << 40, "2^40"),
                                       ("len_2p63", 1 << 63, "2^63"),
                                       ("len_2p64m1", (1 << 64) - 1, "2^64-1")):
                rest = d3 + struct.pack("<I", masked_crc(d3)) + tail
                put(name, head + tf_header(length) + rest, "truncated_data", "huge_length",
                    "frame 3's header declares %s bytes with a correct length CRC (so it is not a "
                    "CRC error); frame 3's real data and frames 4 and 5 follow, %d bytes in all: "
                    "a truncated frame, and nothing may be allocated for it. In skip mode the "
                    "damaged frame reaches to the end of the input." % (what, len(rest)), before,
                    {"declared": min(length + 4, (1 << 64) - 1), "available": len(rest)})
            bad = struct.pack("<Q", 1 << 40) + f3[8:12]
            computed = masked_crc(bad[:8])
            put("len_2p40_bad_crc", head + bad + f3[12:] + tail, "length_crc_mismatch",
                "huge_length", "frame 3's length replaced by 2^40, its length CRC left as it was "
                "(for length %d): the CRC is checked before the length is used. Skip mode searches "
                "forward and finds frame 4." % len(d3), others,
                {"stored": struct.unpack("<I", f3[8:12])[0], "computed": computed})
            flipped = bytearray(f3)
            flipped[12 + len(d3) // 2] ^= 0x10
            put("data_crc_mismatch", head + bytes(flipped) + tail, "data_crc_mismatch",
                "data_crc_mismatch", "bit 4 of the middle byte of frame 3's data flipped", others,
                {"stored": masked_crc(d3), "computed": masked_crc(bytes(flipped[12:12 + len(d3)]))})
            lcrc = bytearray(f3)
            lcrc[8] ^= 0x01
            put("length_crc_mismatch", head + bytes(lcrc) + tail, "length_crc_mismatch",
                "length_crc_mismatch", "bit 0 of frame 3's length CRC flipped; skip mode finds "
                "frame 4", others,
                {"stored": struct.unpack("<I", bytes(lcrc[8:12]))[0],
                 "computed": masked_crc(f3[:8])})
        else:
            for name, length, what in (("len_2p40", 1 << 40, "2^40"),
                                       ("len_2p63m1", (1 << 63) - 1, "2^63-1")):
                rest = d3 + tail
                put(name, head + struct.pack("<q", length) + rest, "truncated_data", "huge_length",
                    "frame 3's length is %s; frame 3's real data and frames 4 and 5 follow, %d "
                    "bytes in all: a truncated frame, and nothing may be allocated for it"
                    % (what, len(rest)), before, {"declared": length, "available": len(rest)})
            for name, length in (("len_neg1", -1), ("len_i64min", -(1 << 63)),
                                 ("len_neg_size", -len(d3))):
                put(name, head + struct.pack("<q", length) + d3 + tail, "invalid_length",
                    "negative_length", "frame 3's length is %d (struct.pack('q')); there is no "
                    "checksum to find the next frame by, so skip mode stops there" % length, None,
                    {"length": length})


# --------------------------------------------------------------------------------------------
# Compressed streams: damage inside a valid stream (above), decode errors inside one, and damage
# to the stream itself (compression_error).


def compressed_attacks():
    for comp in ("gzip", "zlib"):
        framing_attacks(comp)
        s = TF
        rec = lambda **kw: build(s, N_BEFORE, **kw)  # noqa: E731
        payload_file("tfrecord", "wiretype7_top", "wire_type_7",
                     "record 3's payload ends with a tag of wire type 7 (inside a valid stream)",
                     rec(extra=at("top", marked(tag(F, 7) + b"\x01"))), "decode_error",
                     "InvalidWireType(7)", compression=comp)
        payload_file("tfrecord", "nest100000_top", "nesting_100000",
                     "100 000 nested groups at the top of record 3 (inside a valid stream)",
                     rec(extra=at("top", marked(tag(F, 3) * 100_000 + tag(F, 4) * 100_000, 100))),
                     "decode_error", "DepthLimitExceeded", compression=comp)
        payload_file("tfrecord", "utf8_ff", "invalid_utf8_name",
                     "the name of feature 'id' is 'id\\xff' (inside a valid stream)",
                     (rec(key=b"id\xff")[0], _key_offset(rec(key=b"id\xff")[0], b"id\xff")),
                     "decode_error", "InvalidUtf8", field_shift=-2, compression=comp)

        # Damage to the stream. The frames go in stored blocks so that where the decompressor
        # stops is known exactly.
        head = b"".join(tf_frame(valid(s, i)) for i in range(N_BEFORE))
        rest = b"".join(tf_frame(valid(s, i)) for i in range(N_BEFORE, N_BEFORE + 1 + N_AFTER))
        stream = head + rest
        jsons = [record_json(s, i) for i in range(N_BEFORE + 1 + N_AFTER)]
        wrap = gzip_wrap if comp == "gzip" else zlib_wrap
        hdr = len(GZIP_HEADER) if comp == "gzip" else len(ZLIB_HEADER)
        trailer = 8 if comp == "gzip" else 4

        def put(name, data, record, offset, before, note, auto=True):
            add("stream_" + name, data, "tfrecord", comp, s, "compression_error", "compression",
                note, record=record, offset=offset, before=before, skip=before, stream=stream,
                auto=auto)

        good = wrap(stored_blocks(head, final=False) + stored_blocks(rest), stream)
        assert zlib.decompress(good, 31 if comp == "gzip" else 15) == stream
        # truncated in the middle of the stored block that holds frame 3
        cut = hdr + len(stored_blocks(head, final=False)) + 5 + 40
        put("truncated", good[:cut], N_BEFORE, len(head), jsons[:N_BEFORE],
            "the stream (stored blocks; frames 0-2 in the first) cut 40 bytes into the data of "
            "the block holding frame 3: 40 decompressed bytes of frame 3 arrive, then the input "
            "ends")
        put("truncated_trailer", good[:-2], N_BEFORE + 1 + N_AFTER, len(stream), jsons,
            "the stream without the last 2 bytes of its %d-byte trailer: every frame decompresses, "
            "then the stream ends before its end" % trailer)
        bad = bytearray(good)
        bad[-trailer] ^= 0x01
        put("bad_checksum", bytes(bad), N_BEFORE + 1 + N_AFTER, len(stream), jsons,
            "the first byte of the trailer (%s) has bit 0 flipped: every frame decompresses, then "
            "the check fails" % ("CRC32" if comp == "gzip" else "Adler-32, big-endian"))
        if comp == "gzip":
            bad = bytearray(good)
            bad[-1] ^= 0x01
            put("bad_isize", bytes(bad), N_BEFORE + 1 + N_AFTER, len(stream), jsons,
                "the last byte of ISIZE (the decompressed size mod 2^32) has bit 0 flipped")
            bad = bytearray(good)
            bad[3] = 0xE0  # reserved FLG bits
            put("reserved_flags", bytes(bad), 0, 0, [],
                "the GZIP header's FLG byte has its 3 reserved bits set (0xe0): invalid before "
                "any data")
        put("trailing_garbage", good + b"NOT A COMPRESSED STREAM", N_BEFORE + 1 + N_AFTER,
            len(stream), jsons, "23 bytes of text after the end of the stream")
        # a block of reserved type 3 after the block holding frames 0-2
        bt = wrap(stored_blocks(head, final=False) + b"\x07" + b"\x00" * 16, stream)
        put("reserved_block_type", bt, N_BEFORE, len(head), jsons[:N_BEFORE],
            "a first stored block holding frames 0-2 exactly, then a block header with BTYPE = 11 "
            "(reserved): frames 0-2 decompress, then the stream is corrupt at frame 3")
        # a stored block whose NLEN is not the complement of LEN
        sb = bytearray(stored_blocks(rest))
        sb[3] ^= 0x01
        bl = wrap(stored_blocks(head, final=False) + bytes(sb), stream)
        put("stored_len_mismatch", bl, N_BEFORE, len(head), jsons[:N_BEFORE],
            "a first stored block holding frames 0-2 exactly, then a stored block whose NLEN is not "
            "the one's complement of LEN")
        bt0 = wrap(b"\x07" + b"\x00" * 16, stream)
        put("reserved_block_type_first", bt0, 0, 0, [],
            "the first deflate block has BTYPE = 11 (reserved): nothing decompresses")
        # a fixed-Huffman match reaching back before the start of the output
        w = BitWriter()
        w.bits(1, 1)
        w.bits(1, 2)
        for b in head:
            _fixed_symbol(w, b)
        _fixed_symbol(w, 257)  # length 3
        w.huff(29, 5)  # distance code 29: 24577 + 13 extra bits, far past the output so far
        w.bits(0, 13)
        _fixed_symbol(w, 256)
        far = wrap(w.flush(), stream)
        put("distance_too_far", far, N_BEFORE, len(head), jsons[:N_BEFORE],
            "one fixed-Huffman block: frames 0-2 as literals, then a match at distance 24577, "
            "before the start of the output")


def main():
    payload_attacks()
    framing_attacks()
    compressed_attacks()
    os.makedirs(OUT_DIR, exist_ok=True)
    # Only this script writes into hostile/: drop files it no longer makes.
    for old in os.listdir(OUT_DIR):
        if "hostile/" + old not in FILES:
            os.remove(os.path.join(OUT_DIR, old))
    for name, data in FILES.items():
        with open(os.path.join(BAD, name), "wb") as f:
            f.write(data)
    with open(MANIFEST, "w", encoding="utf-8", newline="\n") as f:
        json.dump(ENTRIES, f, indent=1, ensure_ascii=True)
        f.write("\n")
    counts = {}
    for e in ENTRIES:
        counts[e["outcome"]] = counts.get(e["outcome"], 0) + 1
    total = sum(len(d) for d in FILES.values())
    print("%d files, %d bytes; %s" % (len(FILES), total,
                                       ", ".join("%s %d" % kv for kv in sorted(counts.items()))),
          file=sys.stderr)


if __name__ == "__main__":
    main()
