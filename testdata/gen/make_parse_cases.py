#!/usr/bin/env python3
"""Writes testdata/schema/parse.expected.jsonl: JSON that protobuf's JSON mapping accepts in forms
MessageToDict never prints (int64 as numbers, integral floats, enums by number, URL-safe base64,
numeric strings, time zone offsets, null for unset fields, Any holding well-known types, ...) and
mistakes it refuses, with what `json_format.Parse` makes of each: the message's
`SerializePartialToString(deterministic=True)` as base64, or its error. The oracle of
`Schema::encode_json` beside the fixtures' `dict`s (src/schema/encode_tests.rs).

    PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python python testdata/gen/make_parse_cases.py

Needs protobuf==7.36.2 (testdata/schema/README.md); the pure-Python runtime, for the order of map
entries inside an Any's value (JSON order; upb's is its hash table's). Each line:
{"message", "schema" (the .pb under testdata/schema/), "json", "deterministic_b64" or "error"}.

Left out, where recordwire is deliberately stricter or laxer than Parse (see docs/FORMAT.md §14):
base64 with characters outside both alphabets (Parse drops them), a message given as an array, a
field given by both its names (Parse: the last wins), keys beside "@type" and "value" in an Any
holding a well-known type (Parse ignores them), and a float number that rounds to the largest float
(3.4028235e38, which MessageToDict prints and Parse refuses).
"""
import base64
import json
import os

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

assert os.environ.get("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION") == "python", "run with the pure-Python runtime"
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schema")

def cls(name, pb):
    fds = descriptor_pb2.FileDescriptorSet.FromString(open(pb, "rb").read())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name)), pool

cases = {
 ("rwtest.Shapes","shapes"): [
  '{"f_int64": 9007199254740993}', '{"f_int64": "-9223372036854775808"}', '{"f_uint64": "18446744073709551615"}',
  '{"f_uint64": 18446744073709551616}', '{"f_int32": 1.0}', '{"f_int32": 1e3}', '{"f_int32": "1.0"}', '{"f_int32": " 1"}',
  '{"f_int32": "+1"}', '{"f_int32": "01"}', '{"f_int32": 1.5}', '{"f_int32": true}', '{"f_int32": -2147483649}',
  '{"f_float": "NaN"}', '{"f_float": "Infinity"}', '{"f_double": "-Infinity"}', '{"f_double": "1e5"}', '{"f_double": " 2.5 "}',
  '{"f_double": "nan"}', '{"f_double": "inf"}', '{"f_double": -0.0}', '{"f_float": -0.0}', '{"f_float": 3.4028235e38}', '{"f_float": 3.5e38}',
  '{"f_double": 1e400}', '{"f_float": "1e39"}',
  '{"f_bool": "true"}', '{"f_bool": 1}', '{"f_string": 5}', '{"f_string": null}', '{"f_bytes": "-_8"}', '{"f_bytes": "+/8="}', '{"f_bytes": "YQ"}',
  '{"f_bytes": "a*b="}', '{"f_bytes": "YR=="}', '{"f_bytes": "Y"}',
  '{"color": 1}', '{"color": "1"}', '{"color": 7}', '{"color": "7"}', '{"color": "PURPLE"}', '{"color": null}', '{"colors": ["RED", 9, "2"]}',
  '{"colors": [null]}', '{"r_int32": null}', '{"r_int32": 5}', '{"inner": null}', '{"inner": []}',
  '{"opt_int32": 0, "opt_string": ""}', '{"pick_int": 0}', '{"pick_int": 1, "pick_text": null}', '{"pick_int": 1, "pickText": "a"}',
  '{"fInt32": 1, "f_int32": 2}', '{"nope": 1}', '{"m_bool_inner": {"true": {}, "false": {"a": 1}}}', '{"m_bool_inner": {"True": {}}}',
  '{"m_int64_str": {"5": "a", "-5": "b", "10": "c"}}', '{"m_int64_str": {"05": "a"}}', '{"m_str_int": {"b": 1, "a": 0, "": 2}}',
  '{"m_str_int": {"a": null}}', '{"m_bool_inner": {"true": null}}', '{"m_uint32_color": {"4294967295": "RED", "0": 5}}', '{"m_uint32_color": {"-1": "RED"}}',
  '{"inners": [{"children": [{"a": 1}]}, {}]}', '{"r_float": [1.5, "NaN"], "r_sint64": ["-1", 2], "r_fixed32": [1, 4294967295]}',
  '{"m_int64_str": {"1e2": "x"}}', '{"f_sint32": -3, "f_sfixed32": -1, "f_fixed64": "5", "f_sfixed64": -7}',
 ],
 ("rwtest.Legacy","legacy"): [
  '{"kind": 7}', '{"kind": "A"}', '{"kind": 2}', '{"unpacked": [1, 2], "packed_ints": [1, -1]}', '{"grp": {"g": 1}}', '{"Grp": {"g": 1}}',
  '{"with_default": 42}', '{"blob": ""}', '{}', '{"name": "x"}',
 ],
 ("rwtest.Wkt","wkt"): [
  '{"ts": "1970-01-01T00:00:00Z"}', '{"ts": "2024-02-29T12:00:00.5+01:00"}', '{"ts": "1970-01-01T00:00:00.1234567891Z"}', '{"ts": "1970-01-01t00:00:00Z"}',
  '{"ts": "0001-01-01T00:00:00Z"}', '{"ts": "1970-01-01T00:00:00"}', '{"ts": 5}', '{"ts": "2024-02-30T00:00:00Z"}',
  '{"dur": "1.5s"}', '{"dur": "-0.5s"}', '{"dur": "0s"}', '{"dur": "1.0000000005s"}', '{"dur": "1.5"}', '{"dur": "+1s"}', '{"dur": "315576000001s"}', '{"dur": "-1.s"}', '{"dur": ".5s"}',
  '{"w_int32": 0}', '{"w_string": ""}', '{"w_double": "NaN"}', '{"w_int64": "5"}', '{"w_bool": null}', '{"w_int32s": [1, 0]}', '{"w_int32s": [null]}',
  '{"st": {"b": 1, "a": null, "c": [true, "x", {"d": 2.5}]}}', '{"st": []}', '{"val": null}', '{"val": 3}', '{"val": [1, null]}', '{"val": {}}', '{"val": 1e400}',
  '{"lst": [null, 1]}', '{"lst": {}}', '{"mask": "fooBar.bazQux,a"}', '{"mask": ""}', '{"mask": "foo_bar"}', '{"mask": "a,,b"}',
  '{"any": {}}', '{"any": {"@type": "type.googleapis.com/rwtest.Wkt.Note", "text": "hi", "n": 5}}',
  '{"any": {"@type": "type.googleapis.com/google.protobuf.Duration", "value": "1.5s"}}',
  '{"any": {"@type": "type.googleapis.com/google.protobuf.Empty"}}', '{"any": {"@type": "type.googleapis.com/google.protobuf.Int32Value", "value": 0}}',
  '{"any": {"@type": "type.googleapis.com/google.protobuf.Struct", "value": {"b": 1, "a": 2}}}',
  '{"any": {"@type": "type.googleapis.com/google.protobuf.Any", "value": {"@type": "type.googleapis.com/rwtest.Wkt.Note", "n": 1}}}',
  '{"any": {"text": "x"}}', '{"any": {"@type": "x/rwtest.Nope"}}', '{"any": {"@type": "type.googleapis.com/google.protobuf.Duration", "value": "1s", "x": 1}}',
  '{"any": {"@type": "type.googleapis.com/rwtest.Wkt.Note", "nope": 1}}', '{"vals": {"a": null, "b": 1}}', '{"empty": {}}', '{"empty": {"x": 1}}',
  '{"anys": [{}, {"@type": "type.googleapis.com/rwtest.Wkt.Note"}]}', '{"durs": ["1s", "-1s"]}', '{"tss": [null]}',
 ],
}

LEFT_OUT = {
    '{"f_float": 3.4028235e38}', '{"f_bytes": "a*b="}', '{"inner": []}', '{"fInt32": 1, "f_int32": 2}',
    '{"any": {"@type": "type.googleapis.com/google.protobuf.Duration", "value": "1s", "x": 1}}',
}

with open(os.path.join(HERE, "parse.expected.jsonl"), "w", encoding="utf-8") as out:
    for (msg, name), jsons in cases.items():
        C, pool = cls(msg, os.path.join(HERE, name + ".pb"))
        for j in jsons:
            if j in LEFT_OUT:
                continue
            line = {"message": msg, "schema": name + ".pb", "json": j}
            try:
                m = C()
                json_format.Parse(j, m, descriptor_pool=pool)
                line["deterministic_b64"] = base64.b64encode(m.SerializePartialToString(deterministic=True)).decode()
            except json_format.ParseError as e:
                line["error"] = str(e).split("\n")[0]
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
