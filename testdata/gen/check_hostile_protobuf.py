#!/usr/bin/env python3
"""Cross-checks testdata/bad/hostile.json against Google's protobuf parsers (optional).

docs/FORMAT.md §3 makes Google's parser the reference: a payload must be rejected exactly when
ParseFromString rejects it. For every manifest entry about a payload (those with `payload_offset`),
this script parses the hostile payload with protobuf's runtimes, upb (the default) and the
pure-Python one, and compares accept/reject (and, for accepted payloads, MessageToDict) with the
manifest's outcome. It needs the `protobuf` package (nothing else: the message types are built here
from descriptors), e.g. in the environment of gen/README.md:

    /tmp/refenv/bin/python testdata/gen/check_hostile_protobuf.py

It prints one line per disagreement and a summary; make_hostile.py does not depend on it.
"""

import json
import os
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(os.path.dirname(HERE), "bad")


def classes():
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    FD = descriptor_pb2.FieldDescriptorProto
    pool = descriptor_pool.DescriptorPool()

    def msg(fdp, name, fields, oneof=None, nested=()):
        m = fdp.message_type.add(name=name)
        for n in nested:
            m.nested_type.add().CopyFrom(n)
        if oneof:
            m.oneof_decl.add(name=oneof)
        for fname, number, ftype, label, type_name, packed in fields:
            f = m.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                f.type_name = type_name
            if packed:
                f.options.packed = True
            if oneof and label == FD.LABEL_OPTIONAL and ftype == FD.TYPE_MESSAGE and (
                    name == "Feature"):
                f.oneof_index = 0
        return m

    def entry(name, value_type):
        e = descriptor_pb2.DescriptorProto(name=name)
        e.options.map_entry = True
        e.field.add(name="key", number=1, type=FD.TYPE_STRING, label=FD.LABEL_OPTIONAL)
        e.field.add(name="value", number=2, type=FD.TYPE_MESSAGE, label=FD.LABEL_OPTIONAL,
                    type_name=value_type)
        return e

    R, O = FD.LABEL_REPEATED, FD.LABEL_OPTIONAL
    tf = descriptor_pb2.FileDescriptorProto(name="hostile_tf.proto", package="tensorflow",
                                            syntax="proto3")
    msg(tf, "BytesList", [("value", 1, FD.TYPE_BYTES, R, None, False)])
    msg(tf, "FloatList", [("value", 1, FD.TYPE_FLOAT, R, None, True)])
    msg(tf, "Int64List", [("value", 1, FD.TYPE_INT64, R, None, True)])
    msg(tf, "Feature", [("bytes_list", 1, FD.TYPE_MESSAGE, O, ".tensorflow.BytesList", False),
                        ("float_list", 2, FD.TYPE_MESSAGE, O, ".tensorflow.FloatList", False),
                        ("int64_list", 3, FD.TYPE_MESSAGE, O, ".tensorflow.Int64List", False)],
        oneof="kind")
    msg(tf, "Features", [("feature", 1, FD.TYPE_MESSAGE, R, ".tensorflow.Features.FeatureEntry",
                          False)], nested=[entry("FeatureEntry", ".tensorflow.Feature")])
    msg(tf, "Example", [("features", 1, FD.TYPE_MESSAGE, O, ".tensorflow.Features", False)])
    pool.Add(tf)

    of = descriptor_pb2.FileDescriptorProto(name="hostile_of.proto", package="oneflow",
                                            syntax="proto2")
    msg(of, "BytesList", [("value", 1, FD.TYPE_BYTES, R, None, False)])
    msg(of, "FloatList", [("value", 1, FD.TYPE_FLOAT, R, None, True)])
    msg(of, "DoubleList", [("value", 1, FD.TYPE_DOUBLE, R, None, True)])
    msg(of, "Int32List", [("value", 1, FD.TYPE_INT32, R, None, True)])
    msg(of, "Int64List", [("value", 1, FD.TYPE_INT64, R, None, True)])
    msg(of, "Feature", [("bytes_list", 1, FD.TYPE_MESSAGE, O, ".oneflow.BytesList", False),
                        ("float_list", 2, FD.TYPE_MESSAGE, O, ".oneflow.FloatList", False),
                        ("double_list", 3, FD.TYPE_MESSAGE, O, ".oneflow.DoubleList", False),
                        ("int32_list", 4, FD.TYPE_MESSAGE, O, ".oneflow.Int32List", False),
                        ("int64_list", 5, FD.TYPE_MESSAGE, O, ".oneflow.Int64List", False)],
        oneof="kind")
    msg(of, "OFRecord", [("feature", 1, FD.TYPE_MESSAGE, R, ".oneflow.OFRecord.FeatureEntry",
                          False)], nested=[entry("FeatureEntry", ".oneflow.Feature")])
    pool.Add(of)
    get = message_factory.GetMessageClass
    return {"example": get(pool.FindMessageTypeByName("tensorflow.Example")),
            "ofrecord": get(pool.FindMessageTypeByName("oneflow.OFRecord"))}


def stream_of(e):
    raw = open(os.path.join(BAD, e["file"]), "rb").read()
    if e["compression"] == "none":
        return raw
    return zlib.decompressobj(31 if e["compression"] == "gzip" else 15).decompress(raw)


def verdicts():
    """Runs in a subprocess per runtime: {file: [accepted, message or dict]}."""
    from google.protobuf import json_format

    types = classes()
    out = {}
    for e in json.load(open(os.path.join(BAD, "..", "bad", "hostile.json"))):
        if "payload_offset" not in e:
            continue
        s = stream_of(e)
        payload = s[e["payload_offset"]:e["payload_offset"] + e["payload_len"]]
        m = types[e["payload"]]()
        try:
            m.ParseFromString(payload)
        except Exception as ex:  # noqa: BLE001 - every parser error counts
            out[e["file"]] = [False, "%s: %s" % (type(ex).__name__, str(ex)[:100])]
            continue
        try:
            d = json_format.MessageToDict(m, preserving_proto_field_name=True)
        except Exception as ex:  # noqa: BLE001
            d = "parsed, but MessageToDict fails: %s" % str(ex)[:100]
        out[e["file"]] = [True, d]
    return out


def main():
    if "--child" in sys.argv:
        json.dump(verdicts(), sys.stdout, default=repr)
        return
    manifest = {e["file"]: e for e in json.load(open(os.path.join(BAD, "hostile.json")))}
    disagreements = 0
    checked = 0
    for impl in ("upb", "python"):
        env = dict(os.environ, PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=impl)
        got = json.loads(subprocess.check_output([sys.executable, __file__, "--child"], env=env))
        for f, (accepted, detail) in sorted(got.items()):
            e = manifest[f]
            checked += 1
            want_ok = e["outcome"] == "ok"
            if accepted != want_ok:
                disagreements += 1
                print("%-6s %-55s manifest %-12s protobuf %s" % (
                    impl, f, e["outcome"] if want_ok else e["reason"],
                    "accepts" if accepted else "rejects (%s)" % detail))
            elif accepted:
                want = json.loads(e["json_before"][e["payload_record"]])
                if not same(detail, want):
                    disagreements += 1
                    print("%-6s %-55s values differ:\n    protobuf %s\n    manifest %s" % (
                        impl, f, json.dumps(detail), json.dumps(want)))
    print("%d verdicts checked (upb and pure Python), %d disagreements" % (checked, disagreements))


def same(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


if __name__ == "__main__":
    main()
