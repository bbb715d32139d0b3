#!/usr/bin/env python3
"""Generate TensorFlow fixtures for recordwire's batched Example/SequenceExample decoder.

Builds serialized tf.train.Example / tf.train.SequenceExample records (tf.train.* protos; malformed
ones crafted from raw protobuf wire bytes), runs tf.io.parse_example / tf.io.parse_sequence_example
on them with one inter-op and one intra-op thread, and writes what TensorFlow returned (or the error it
raised) to testdata/batch/cases/<case>.json, one file per case. See README.md for the format and
TF_RULES.md for the rules these fixtures show.

Also writes testdata/batch/observations.json: for every case, the warnings TensorFlow logged while
parsing it (the "OP_REQUIRES failed" echo of the error is left out) and, for error cases, the
message TensorFlow gives when the same batch is parsed with example names "r0", "r1", ... (that
shows which record TensorFlow blames where the plain message does not).

Deterministic: no randomness but random.Random with fixed seeds, and the pure-Python protobuf
runtime so that map entries are serialized in insertion order. Rerun with
    /work/venv-tf/bin/python testdata/batch/make.py
"""
import os

# Must be set before protobuf / TensorFlow are imported.
os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"  # keep warnings: the script records them

import base64
import json
import random
import re
import struct
import sys
import tempfile

import numpy as np
import tensorflow as tf

tf.config.threading.set_inter_op_parallelism_threads(1)
tf.config.threading.set_intra_op_parallelism_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "cases")

# ---------------------------------------------------------------------------------------------
# Spec JSON -> TensorFlow feature specs
# ---------------------------------------------------------------------------------------------

TF_DTYPES = {"int64": tf.int64, "float32": tf.float32, "bytes": tf.string}


def tf_features(spec_dict):
    """Map one spec dict ({name: {"form", "dtype", ...}}) to {name: tf.io.*Feature}."""
    out = {}
    for name, f in spec_dict.items():
        dtype = TF_DTYPES[f["dtype"]]
        default = f.get("default")  # omitted -> None (TensorFlow's "no default")
        if default is not None and f["dtype"] == "float32":
            # As an array, not a Python float: eager TensorFlow caches scalar
            # constants by value, and 0.0 == -0.0, so a default of 0.0 would
            # come back as an earlier case's -0.0.
            default = np.asarray(default, dtype=np.float32)
        form = f["form"]
        if form == "fixed_len":
            out[name] = tf.io.FixedLenFeature(f["shape"], dtype, default_value=default)
        elif form == "var_len":
            out[name] = tf.io.VarLenFeature(dtype)
        elif form == "fixed_len_sequence":
            out[name] = tf.io.FixedLenSequenceFeature(
                f["shape"], dtype, allow_missing=f["allow_missing"], default_value=default)
        else:
            raise ValueError("unknown form %r" % form)
    return out


# Spec JSON builders (what goes into the fixture's "spec").
_NO = object()


def fixed(dtype, shape, default=_NO):
    d = {"form": "fixed_len", "dtype": dtype, "shape": list(shape)}
    if default is not _NO:
        d["default"] = default
    return d


def varlen(dtype):
    return {"form": "var_len", "dtype": dtype}


def fixseq(dtype, shape, allow_missing, default=_NO):
    d = {"form": "fixed_len_sequence", "dtype": dtype, "shape": list(shape),
         "allow_missing": allow_missing}
    if default is not _NO:
        d["default"] = default
    return d


def ex_spec(**features):
    return {"payload": "example", "features": features}


def seq_spec(context, sequence):
    return {"payload": "sequence_example", "features": context, "sequence": sequence}


# ---------------------------------------------------------------------------------------------
# Records: tf.train protos
# ---------------------------------------------------------------------------------------------

def I(*v):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=list(v)))


def Fl(*v):
    return tf.train.Feature(float_list=tf.train.FloatList(value=list(v)))


def B(*v):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[x.encode() if isinstance(x, str) else x for x in v]))


def NOKIND():
    return tf.train.Feature()  # a Feature with no list set at all


def example(*pairs):
    """Serialized tf.train.Example; pairs = (name, Feature) in wire order."""
    ex = tf.train.Example()
    for name, feat in pairs:
        ex.features.feature[name].CopyFrom(feat)
    return ex.SerializeToString()


def seq_example(context=(), lists=None):
    """Serialized tf.train.SequenceExample. context = (name, Feature) pairs; lists = (name, [Feature]) pairs
    (None: feature_lists absent)."""
    se = tf.train.SequenceExample()
    for name, feat in context:
        se.context.feature[name].CopyFrom(feat)
    if lists is not None:
        se.feature_lists.SetInParent()
        for name, frames in lists:
            fl = se.feature_lists.feature_list[name]
            for fr in frames:
                fl.feature.add().CopyFrom(fr)
    return se.SerializeToString()


# ---------------------------------------------------------------------------------------------
# Records: raw wire bytes, for shapes tf.train protos cannot express
# ---------------------------------------------------------------------------------------------

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(field, wire_type):
    return varint((field << 3) | wire_type)


def ld(field, payload):
    return tag(field, 2) + varint(len(payload)) + payload


def raw_entry(key, feature_bytes):
    """One map entry of Features.feature (field 1 of Features): key then value."""
    return ld(1, ld(1, key) + ld(2, feature_bytes))


def raw_example(entries):
    """Example{features{entries}} from already-encoded map entries (each from raw_entry)."""
    return ld(1, b"".join(entries))


def f32_bits(*bits):
    return b"".join(struct.pack("<I", b) for b in bits)


def ser(feature):
    return feature.SerializeToString()


# ---------------------------------------------------------------------------------------------
# Running TensorFlow and converting its output
# ---------------------------------------------------------------------------------------------

def b64(b):
    return base64.b64encode(bytes(b)).decode("ascii")


def values_json(arr):
    arr = np.asarray(arr)
    flat = arr.reshape(-1)
    if arr.dtype == np.int64:
        return [int(x) for x in flat]
    if arr.dtype == np.float32:
        return [int(x) for x in flat.view(np.uint32)]
    if arr.dtype == object:
        return [b64(x) for x in flat]
    raise TypeError("unexpected dtype %s" % arr.dtype)


def column_json(t):
    if isinstance(t, tf.SparseTensor):
        return {"sparse": {"indices": [[int(i) for i in row] for row in t.indices.numpy()],
                           "values": values_json(t.values.numpy()),
                           "dense_shape": [int(x) for x in t.dense_shape.numpy()]}}
    a = t.numpy()
    return {"dense": {"shape": [int(x) for x in a.shape], "values": values_json(a)}}


def dict_json(d, order):
    # Columns in spec order (TensorFlow's dicts come back in its own order).
    return {name: column_json(d[name]) for name in order if name in d}


_PREFIX = re.compile(r"^\{\{function_node [^}]*\}\} ")
_SUFFIX = re.compile(r" \[Op:[A-Za-z0-9_]+\]$")


def clean_message(msg):
    """TensorFlow's status message without the eager wrappers: the leading
    '{{function_node __wrapped__ParseExampleV2_...}} ' and the trailing ' [Op:ParseExampleV2]'."""
    msg = _PREFIX.sub("", msg, count=1)
    return _SUFFIX.sub("", msg, count=1)


# Which record / feature each of TensorFlow's messages names (None where it does not say).
# parse_example's "Index: N" is the record index; in parse_sequence_example's messages "Index: N" is
# the frame (row) index inside the feature list, not the record.
_LOCATORS = [
    ("parse_example", r"^Name: [^,]*, Key: (?P<f>.*), Index: (?P<r>\d+)\.  ", True),
    ("parse_example", r"^Name: [^,]*, Feature: (?P<f>.*) \(data type: \w+\) is required but could not be found\.$", False),
    ("parse_example", r"^Could not parse example input, value: '", False),
    ("parse_example", r"^Unsupported datatype\.$", False),
    ("parse_sequence_example", r"^Name: [^,]*, Feature list '(?P<f>.*)' is required but could not be found\.", False),
    ("parse_sequence_example", r"^Name: [^,]*, Key: (?P<f>.*), Index: \d+\.  Number of values != expected\.", False),
    ("parse_sequence_example", r"^Name: [^,]*, Feature list: (?P<f>.*), Index: \d+\.  Data types don't match\.", False),
    ("parse_sequence_example", r"^Name: [^,]*, Context feature: (?P<f>.*)\.  Data types don't match\.", False),
    ("parse_sequence_example", r"^Feature: (?P<f>.*) \(data type: \w+\) is required but could not be found\.$", False),
    ("parse_sequence_example", r"^Inconsistent max number of elements for feature (?P<f>.*): expected \d+, but found \d+$", False),
    ("parse_sequence_example", r"^Unexpected number of elements in example ", False),
    ("parse_sequence_example", r"^Feature list '(?P<f>.*)' has an unexpected number of values\.", False),
    ("parse_sequence_example", r"^Invalid protocol message input, example id: ", False),
    ("parse_sequence_example", r"^Error in sequence feature (?P<f>.*) in example ", False),
    (None, r"^Unsupported: FixedLenSequenceFeature requires allow_missing to be True\.$", False),
    (None, r"^Value feature_list\.dense_defaults\[(?P<f>.*)\] must be None$", False),
    (None, r"^Unsupported \w+ .* for key '(?P<f>.*)'$", False),
    (None, r"^Input to reshape is a tensor with \d+ values, but the requested shape has \d+$", False),
]


def locate(api, msg):
    for where, pattern, has_record in _LOCATORS:
        if where not in (None, api):
            continue
        m = re.search(pattern, msg, re.S)
        if m:
            feature = m.groupdict().get("f")
            record = int(m.group("r")) if has_record else None
            return record, feature
    raise AssertionError("message of an unknown form (add it to _LOCATORS): %r" % msg)


class CaptureFd2:
    """Capture everything written to file descriptor 2 (TensorFlow's C++ logging goes there)."""

    def __enter__(self):
        sys.stderr.flush()
        self.tmp = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.tmp.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.tmp.seek(0)
        self.text = self.tmp.read().decode("utf-8", "backslashreplace")
        self.tmp.close()
        return False


_LOG_LINE = re.compile(r"^([IWEF])\d{4} [\d:.]+ +\d+ ([^\]]+)\] (.*)$")


def log_records(text):
    """absl log lines -> [(severity, 'file.cc:N', message)], without time and pid; a message that
    spans several lines (a record's bytes in it may hold newlines) is joined back with '\\n'."""
    entries = []
    for line in text.split("\n"):
        m = _LOG_LINE.match(line)
        if m:
            entries.append([m.group(1), m.group(2), m.group(3)])
        elif entries and line:
            entries[-1][2] += "\n" + line
    return entries


def log_entries(text):
    """The warnings worth keeping: all but the OP_REQUIRES echo of the error and the local-rendezvous
    line (both only restate the error, the latter not every time)."""
    out = []
    for sev, src, msg in log_records(text):
        if msg.startswith("OP_REQUIRES failed") or msg.startswith("Local rendezvous is aborting"):
            continue
        out.append("%s %s] %s" % (sev, src, msg))
    return out


def message_from_log(text):
    """The kernel's status message as TensorFlow logged it ('OP_REQUIRES failed at ...: INVALID_ARGUMENT:
    <message>'). Used when the message holds bytes that are not UTF-8: TensorFlow's Python layer then
    raises UnicodeDecodeError instead of InvalidArgumentError, and the log is the only place the message
    can be read; invalid bytes are written as \\xNN (Python's 'backslashreplace')."""
    found = [msg for _, _, msg in log_records(text) if msg.startswith("OP_REQUIRES failed")]
    assert len(found) == 1, found
    m = re.match(r"^OP_REQUIRES failed at [^ ]+ : INVALID_ARGUMENT: (.*)$", found[0], re.S)
    assert m, found[0]
    return m.group(1)


def run_tf(api, spec, records, names=None):
    serialized = tf.constant(records, dtype=tf.string, shape=[len(records)])
    kw = {}
    if names is not None:
        kw["example_names"] = tf.constant(names, dtype=tf.string)
    if api == "parse_example":
        out = tf.io.parse_example(serialized, tf_features(spec["features"]), **kw)
        return {"ok": dict_json(out, spec["features"])}
    ctx, seq, lengths = tf.io.parse_sequence_example(
        serialized, context_features=tf_features(spec["features"]),
        sequence_features=tf_features(spec["sequence"]), **kw)
    return {"ok": dict_json(ctx, spec["features"]),
            "sequence": dict_json(seq, spec["sequence"]),
            "lengths": {name: [int(x) for x in lengths[name].numpy()]
                        for name in spec["sequence"] if name in lengths}}


def evaluate(api, spec, records, names=None):
    """Run TensorFlow on one case: (expect, warnings, python_exception_note)."""
    with CaptureFd2() as cap:
        try:
            result, err = run_tf(api, spec, records, names), None
        except (tf.errors.OpError, ValueError) as e:
            result, err = None, e
    warnings = log_entries(cap.text)
    if err is None:
        return result, warnings, None
    note = None
    if isinstance(err, tf.errors.OpError):
        msg = clean_message(err.message)
    elif isinstance(err, UnicodeDecodeError):
        msg = message_from_log(cap.text)
        note = "%s: %s" % (type(err).__name__, err)
    else:
        msg = str(err)
    record, feature = locate(api, msg)
    return {"error": {"record": record, "feature": feature, "message": msg}}, warnings, note


# ---------------------------------------------------------------------------------------------
# JSON output (compact lists, one record per line)
# ---------------------------------------------------------------------------------------------

def dump(obj, indent=0, key=None):
    pad = " " * indent
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [pad + " " + json.dumps(k) + ": " + dump(v, indent + 1, k) for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and key == "records" and obj:
        return "[\n" + ",\n".join(pad + " " + json.dumps(x) for x in obj) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=True, separators=(", ", ": "))


# ---------------------------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------------------------

CASES = []


def case(name, api, spec, records, note):
    assert all(c["name"] != name for c in CASES), name
    assert isinstance(records, list) and all(isinstance(r, bytes) for r in records)
    CASES.append({"name": name, "api": api, "spec": spec, "records": records, "note": note})


def E(name, spec, records, note):
    case(name, "parse_example", spec, records, note)


def S(name, spec, records, note):
    case(name, "parse_sequence_example", spec, records, note)


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

# --- parse_example: FixedLen ---------------------------------------------------------------

E("fixed_len_all_dtypes",
  ex_spec(label=fixed("int64", []), pair=fixed("float32", [2]), name=fixed("bytes", []),
          grid=fixed("int64", [2, 3])),
  [example(("label", I(1)), ("pair", Fl(0.5, -1.25)), ("name", B("a")), ("grid", I(1, 2, 3, 4, 5, 6))),
   example(("grid", I(-1, -2, -3, -4, -5, -6)), ("name", B("")), ("pair", Fl(3.0, 4.0)), ("label", I(-7))),
   example(("label", I(300)), ("pair", Fl(1e-3, 1e30)), ("name", B(b"\x00\xff")), ("grid", I(0, 0, 0, 0, 0, 1)))],
  "FixedLen of every dtype, multi-dimensional shape row-major, features in any wire order")

E("fixed_len_missing_no_default",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(1))), example(("other", I(2))), example(("label", I(3)))],
  "FixedLen without default, feature absent in record 1")

E("fixed_len_missing_with_defaults",
  ex_spec(label=fixed("int64", [], 7), score=fixed("float32", [], -0.0), pair=fixed("float32", [2], [1.5, 2.5]),
          name=fixed("bytes", [], "unk"), names=fixed("bytes", [2], ["größe", ""]),
          grid=fixed("int64", [2, 2], [1, 2, 3, 4])),
  [example(("label", I(1)), ("score", Fl(0.25)), ("pair", Fl(9.0, 8.0)), ("name", B("x")),
           ("names", B("p", "q")), ("grid", I(5, 6, 7, 8))),
   example(),
   example(("pair", Fl(-1.0, -2.0)))],
  "defaults: int64 scalar, float -0.0, float list for shape [2], bytes text, bytes list, [2,2] flat list")

E("fixed_len_scalar_default_for_shape2",
  ex_spec(pair=fixed("float32", [2], 1.5)),
  [example(("pair", Fl(1.0, 2.0)))],
  "a scalar default for shape [2] is not broadcast: TF fails (Reshape)")

E("fixed_len_too_many_values",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(1))), example(("label", I(1, 2)))],
  "FixedLen shape [] with 2 values")

E("fixed_len_too_few_values",
  ex_spec(vec=fixed("float32", [3])),
  [example(("vec", Fl(1, 2, 3))), example(("vec", Fl(1, 2, 3))), example(("vec", Fl(1, 2)))],
  "FixedLen shape [3] with 2 values in record 2")

E("fixed_len_wrong_count_with_default",
  ex_spec(name=fixed("bytes", [], "unk")),
  [example(("name", B("a", "b")))],
  "a default does not excuse a present feature with the wrong count")

E("fixed_len_bytes_too_few",
  ex_spec(names=fixed("bytes", [2], ["a", "b"])),
  [example(("names", B("x", "y"))), example(("names", B("x")))],
  "bytes FixedLen shape [2] with 1 value (too many bytes values fail differently: see fixed_len_wrong_count_with_default)")

E("fixed_len_empty_list_no_default",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(5))), example(("label", I()))],
  "present int64_list with 0 values, no default")

E("fixed_len_empty_list_with_default",
  ex_spec(label=fixed("int64", [], 7)),
  [example(("label", I(5))), example(("label", I()))],
  "present int64_list with 0 values is not 'missing': the default is not used")

E("fixed_len_shape0_present_empty",
  ex_spec(none=fixed("float32", [0])),
  [example(("none", Fl())), example(("none", Fl()))],
  "shape [0] with an empty float_list")

E("fixed_len_shape0_missing",
  ex_spec(none=fixed("float32", [0])),
  [example(("none", Fl())), example()],
  "shape [0], feature absent and no default: required even though it holds no values")

E("fixed_len_no_kind_no_default",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(5))), example(("label", NOKIND()))],
  "a Feature with no list set counts as missing")

E("fixed_len_no_kind_with_default",
  ex_spec(label=fixed("int64", [], 7), name=fixed("bytes", [], "unk")),
  [example(("label", I(5)), ("name", B("n"))), example(("label", NOKIND()), ("name", NOKIND()))],
  "a Feature with no list set takes the default")

E("fixed_len_wrong_dtype_float_for_int64",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(5))), example(("label", Fl(5.0)))],
  "int64 spec, float_list present")

E("fixed_len_wrong_dtype_bytes_for_float",
  ex_spec(score=fixed("float32", [], 0.0)),
  [example(("score", B("1.0")))],
  "float spec, bytes_list present (default does not help)")

E("fixed_len_wrong_dtype_empty_list",
  ex_spec(label=fixed("int64", [], 7)),
  [example(("label", I(1))), example(("label", Fl()))],
  "int64 spec, an EMPTY float_list present: still a dtype error")

# --- parse_example: VarLen -----------------------------------------------------------------

E("var_len_all_dtypes",
  ex_spec(ids=varlen("int64"), weights=varlen("float32"), tags=varlen("bytes")),
  [example(("ids", I(1, 2, 3)), ("weights", Fl(0.5)), ("tags", B("a", "", "bc"))),
   example(),
   example(("ids", I()), ("weights", Fl()), ("tags", B())),
   example(("ids", NOKIND()), ("weights", NOKIND()), ("tags", NOKIND())),
   example(("tags", B(b"\xff\x00")), ("weights", Fl(1.0, 2.0, 3.0, 4.0)), ("ids", I(INT64_MIN)))],
  "VarLen int64/float/bytes: values, missing, empty list, no kind; indices record-major, dense_shape [n, max]")

E("var_len_all_missing",
  ex_spec(ids=varlen("int64"), tags=varlen("bytes")),
  [example(), example(("ids", I())), example(("tags", NOKIND()))],
  "no values anywhere: 0 indices, dense_shape [3, 0]")

E("var_len_wrong_dtype",
  ex_spec(ids=varlen("int64")),
  [example(("ids", I(1))), example(("ids", Fl(1.0)))],
  "VarLen int64, float_list present (different message from FixedLen)")

E("var_len_wrong_dtype_empty_list",
  ex_spec(tags=varlen("bytes")),
  [example(("tags", I()))],
  "VarLen bytes, empty int64_list present")

# --- parse_example: duplicate map keys -----------------------------------------------------

E("dup_fixed_len_last_wins",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(1))) + example(("label", I(2))),
   example(("label", I(3)))],
  "same key twice (two Examples concatenated): values 1 then 2")

E("dup_fixed_len_three_entries",
  ex_spec(name=fixed("bytes", [])),
  [example(("name", B("first"))) + example(("name", B("second"))) + example(("name", B("third")))],
  "same key three times")

E("dup_fixed_len_first_wrong_count",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(1, 2))) + example(("label", I(3)))],
  "first entry has 2 values (bad), last has 1: the first is never checked")

E("dup_fixed_len_last_wrong_count",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(3))) + example(("label", I(1, 2)))],
  "first entry good, last entry has 2 values")

E("dup_fixed_len_first_wrong_kind",
  ex_spec(label=fixed("int64", [])),
  [example(("label", Fl(1.5))) + example(("label", I(4)))],
  "first entry float_list (wrong kind), last int64_list")

E("dup_fixed_len_last_wrong_kind",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(4))) + example(("label", Fl(1.5)))],
  "first entry int64_list, last float_list (wrong kind)")

E("dup_fixed_len_last_no_kind",
  ex_spec(label=fixed("int64", []), other=fixed("int64", [], 9)),
  [example(("label", I(5)), ("other", I(6))) + example(("label", NOKIND()), ("other", NOKIND()))],
  "last entry is a Feature with no list: it is skipped and the earlier entry is used")

E("dup_fixed_len_last_empty_list",
  ex_spec(label=fixed("int64", [], 7)),
  [example(("label", I(5))) + example(("label", I()))],
  "last entry an empty list: it wins, and is the wrong count")

E("dup_var_len_last_wins",
  ex_spec(ids=varlen("int64"), tags=varlen("bytes")),
  [example(("ids", I(1, 2, 3)), ("tags", B("x"))) + example(("ids", I(4)), ("tags", B("y", "z"))),
   example(("ids", I(5)))],
  "VarLen key twice with different counts")

E("dup_var_len_last_no_kind",
  ex_spec(ids=varlen("int64")),
  [example(("ids", I(1, 2))) + example(("ids", NOKIND())),
   example(("ids", I(3)))],
  "VarLen: last entry has no list -> it still wins (no values), unlike FixedLen")

E("dup_var_len_last_empty_list",
  ex_spec(ids=varlen("int64")),
  [example(("ids", I(1, 2))) + example(("ids", I())), example(("ids", I(3)))],
  "VarLen: last entry an empty list wins")

E("dup_var_len_first_wrong_kind",
  ex_spec(ids=varlen("int64")),
  [example(("ids", Fl(1.0))) + example(("ids", I(4)))],
  "VarLen: first entry float_list, last int64_list")

E("dup_var_len_last_wrong_kind",
  ex_spec(ids=varlen("int64")),
  [example(("ids", I(4))) + example(("ids", Fl(1.0)))],
  "VarLen: first entry int64_list, last float_list")

E("dup_unrelated_key",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(1)), ("junk", I(1))) + example(("junk", Fl(2.0)))],
  "a duplicated key that is not in the spec: no effect, no warning")

E("split_features_merge",
  ex_spec(a=fixed("int64", []), b=varlen("bytes")),
  [example(("a", I(1))) + example(("b", B("x", "y"))),
   ld(1, b"") + example(("a", I(2))) + ld(1, b"")],
  "Features field several times with different keys (and empty ones): the maps merge")

# --- parse_example: FixedLenSequenceFeature ------------------------------------------------

E("fixed_len_seq_scalar",
  ex_spec(steps=fixseq("int64", [], True, -1)),
  [example(("steps", I(1, 2, 3))), example(), example(("steps", I())), example(("steps", NOKIND())),
   example(("steps", I(4)))],
  "FixedLenSequence shape [] allow_missing: padded with default -1 to the longest; missing/empty/no-kind = 0 rows")

E("fixed_len_seq_shape2",
  ex_spec(pts=fixseq("float32", [2], True, 0.5)),
  [example(("pts", Fl(1, 2, 3, 4))), example(("pts", Fl(5, 6))), example()],
  "FixedLenSequence shape [2]: rows of 2, padded with default 0.5")

E("fixed_len_seq_no_default",
  ex_spec(ids=fixseq("int64", [], True), words=fixseq("bytes", [], True), xs=fixseq("float32", [], True)),
  [example(("ids", I(7, 8)), ("words", B("a", "b", "c")), ("xs", Fl(1.0))), example()],
  "FixedLenSequence without default pads with 0 / empty bytes / 0.0")

E("fixed_len_seq_all_missing",
  ex_spec(pts=fixseq("int64", [2], True)),
  [example(), example()],
  "no values anywhere: shape [2, 0, 2]")

E("fixed_len_seq_not_multiple",
  ex_spec(pts=fixseq("int64", [2], True)),
  [example(("pts", I(1, 2, 3, 4))), example(("pts", I(5, 6, 7)))],
  "count 3 is not a multiple of 2")

E("fixed_len_seq_wrong_dtype",
  ex_spec(pts=fixseq("int64", [2], True)),
  [example(("pts", Fl(1.0, 2.0)))],
  "float_list for an int64 FixedLenSequence")

E("fixed_len_seq_allow_missing_false",
  ex_spec(pts=fixseq("int64", [2], False)),
  [example(("pts", I(1, 2)))],
  "parse_example rejects FixedLenSequence with allow_missing=False (Python ValueError, before parsing)")

E("fixed_len_seq_count_message_in_minibatch",
  ex_spec(pts=fixseq("int64", [2], True)),
  [example(("pts", I(1, 2 * i))) if i != 5 else example(("pts", I(1, 2, 3))) for i in range(16)],
  "16 records (TF parses them in 8 minibatches of 2): record 5 has 3 values; the message's count "
  "includes record 4's 2 values of the same minibatch")

# --- parse_example: empty batch, special values ---------------------------------------------

E("empty_batch",
  ex_spec(label=fixed("int64", []), pair=fixed("float32", [2]), name=fixed("bytes", [], "x"),
          ids=varlen("int64"), tags=varlen("bytes"), steps=fixseq("float32", [3], True)),
  [],
  "no records at all")

E("float_specials",
  ex_spec(x=fixed("float32", [10]), v=varlen("float32")),
  [example(("x", Fl(float("nan"), float("inf"), float("-inf"), -0.0, 0.0,
                    float(np.float32(1e-45)), float(np.finfo(np.float32).max), float(np.finfo(np.float32).tiny),
                    float(np.float32(1 / 3)), -1.5)),
           ("v", Fl(-0.0))),
   raw_example([raw_entry(b"x", ld(2, ld(1, f32_bits(0x7FC00001, 0x7F800001, 0xFFFFFFFF, 0xFFC00000, 0x80000001,
                                                        0x00000001, 0x7F7FFFFF, 0xFF800000, 0x3F800000, 0x80000000)))),
                raw_entry(b"v", ld(2, ld(1, f32_bits(0x7FA00000, 0x7FC12345))))])],
  "NaN (quiet, with payloads, signalling), infinities, -0.0, denormals, max: bit patterns kept exactly")

E("int64_extremes",
  ex_spec(x=fixed("int64", [8]), v=varlen("int64")),
  [example(("x", I(INT64_MIN, INT64_MAX, -1, 0, 1, (1 << 31) - 1, -(1 << 31), (1 << 32))),
           ("v", I(INT64_MIN, INT64_MAX))),
   example(("x", I(127, 128, 16383, 16384, -127, -128, -16384, 1 << 62)), ("v", I()))],
  "int64 extremes and varint length boundaries")

E("bytes_values",
  ex_spec(b=fixed("bytes", [3]), v=varlen("bytes")),
  [example(("b", B(b"", bytes(range(256)), "日本")), ("v", B(b"\x00", b"", b"\xc3\x28"))),
   example(("b", B(b"x" * 1000, b"\n", b"\xff")), ("v", B(b"")))],
  "empty, all byte values, UTF-8, invalid UTF-8, 1000 bytes")

E("empty_record_bytes",
  ex_spec(label=fixed("int64", [], 3), ids=varlen("int64"), steps=fixseq("int64", [], True)),
  [b"", example(), tf.train.Example(features=tf.train.Features()).SerializeToString(),
   example(("label", I(4)), ("ids", I(1)), ("steps", I(1, 2)))],
  "an empty record, Example() and Example(features={}) are all examples with no features")

# --- parse_example: features not in the spec, wire-level shapes ------------------------------

E("unrelated_features_not_checked",
  ex_spec(label=fixed("int64", [])),
  [raw_example([raw_entry(b"junk", b"\xff\xff\xff\xff"),            # not a valid Feature at all
                raw_entry(b"\xff\xfe bad utf8", ser(I(1))),         # key not valid UTF-8
                raw_entry(b"odd", ld(4, b"\x01\x02")),              # Feature with an unknown field
                raw_entry(b"trunc", ld(3, b"\x0a\x05\x01")),        # int64_list cut short inside
                raw_entry(b"label", ser(I(42)))]),
   example(("label", I(43)), ("junk", Fl(1.0)))],
  "garbled values / invalid UTF-8 names of features not in the spec are ignored")

E("unknown_kind_in_spec",
  ex_spec(label=fixed("int64", [], 0)),
  [example(("label", I(1))), raw_example([raw_entry(b"label", ld(4, b"\x01\x02"))])],
  "the spec's feature holds a Feature whose first field is not one of the three lists")

E("unknown_kind_var_len",
  ex_spec(ids=varlen("int64")),
  [raw_example([raw_entry(b"ids", tag(5, 0) + varint(1))])],
  "VarLen: Feature with an unknown varint field")

E("feature_two_kinds",
  ex_spec(label=fixed("int64", []), ids=varlen("int64")),
  [raw_example([raw_entry(b"label", ser(I(1)) + ser(Fl(2.0))),
                raw_entry(b"ids", ser(I(7, 8)) + ser(I(9)))])],
  "one Feature holding an int64_list then a float_list (or two int64_lists): TF reads only the first "
  "list of the Feature (protobuf itself would take the last)")

E("map_entry_value_before_key",
  ex_spec(label=fixed("int64", []), ids=varlen("int64")),
  [raw_example([ld(1, ld(2, ser(I(5))) + ld(1, b"label")),
                ld(1, ld(2, ser(I(1, 2))) + ld(1, b"ids"))])],
  "map entries with the value field before the key field")

E("map_entry_key_only",
  ex_spec(label=fixed("int64", [], 0)),
  [example(("label", I(1))), raw_example([raw_entry(b"label", ser(I(5))), ld(1, ld(1, b"junk"))])],
  "a map entry with a key and no value (valid protobuf: empty Feature), for a feature not in the spec")

E("map_entry_extra_field",
  ex_spec(label=fixed("int64", [], 0)),
  [raw_example([raw_entry(b"label", ser(I(5))), ld(1, ld(1, b"junk") + ld(2, ser(I(1))) + tag(3, 0) + varint(1))])],
  "a map entry with a third (unknown) field")

E("example_unknown_field",
  ex_spec(label=fixed("int64", [])),
  [tag(2, 0) + varint(300) + example(("label", I(1))) + ld(7, b"junk") + tag(9, 5) + b"\x00\x00\x00\x00"],
  "unknown fields at the Example level are skipped")

E("features_unknown_field",
  ex_spec(label=fixed("int64", [], 0)),
  [ld(1, raw_entry(b"label", ser(I(5))) + tag(2, 0) + varint(1))],
  "an unknown field inside Features")

E("int64_list_unpacked",
  ex_spec(label=fixed("int64", [2]), ids=varlen("int64")),
  [raw_example([raw_entry(b"label", ld(3, tag(1, 0) + varint(-5) + tag(1, 0) + varint(6))),
                raw_entry(b"ids", ld(3, tag(1, 0) + varint(1) + tag(1, 0) + varint(INT64_MAX) + tag(1, 0) + varint(3)))])],
  "int64_list in the unpacked encoding")

E("float_list_unpacked",
  ex_spec(x=fixed("float32", [2]), v=varlen("float32")),
  [raw_example([raw_entry(b"x", ld(2, tag(1, 5) + f32_bits(0x3FC00000) + tag(1, 5) + f32_bits(0x80000000))),
                raw_entry(b"v", ld(2, tag(1, 5) + f32_bits(0x7FC00001)))])],
  "float_list in the unpacked encoding")

E("int64_list_two_packed_chunks",
  ex_spec(label=fixed("int64", [2], [0, 0]), ids=varlen("int64")),
  [raw_example([raw_entry(b"label", ld(3, ld(1, varint(1) + varint(2)) + ld(1, varint(3)))),
                raw_entry(b"ids", ld(3, ld(1, varint(1)) + ld(1, varint(2) + varint(3))))])],
  "an int64_list whose values come in two packed chunks [1,2]+[3] and [1]+[2,3] (protobuf would concatenate "
  "them): TF reads only the first chunk")

E("int64_list_unpacked_then_packed",
  ex_spec(ids=varlen("int64")),
  [raw_example([raw_entry(b"ids", ld(3, tag(1, 0) + varint(1) + ld(1, varint(2) + varint(3))))])],
  "an int64_list with an unpacked value followed by a packed chunk")

E("float_list_packed_odd_length",
  ex_spec(x=fixed("float32", [1], [0.0]), v=varlen("float32")),
  [raw_example([raw_entry(b"x", ld(2, ld(1, f32_bits(0x3F800000) + b"\x00\x00"))),
                raw_entry(b"v", ld(2, ld(1, f32_bits(0x40000000, 0x40400000) + b"\x01")))])],
  "a packed float_list whose byte length is not a multiple of 4")

E("truncated_record",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(1))), example(("label", I(2))), example(("label", I(3)))[:-1], example(("label", I(4)))],
  "record 2 is a valid Example with its last byte cut off")

E("truncated_record_not_utf8",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(1))), example(("label", I(300)), ("x", Fl(-2.0)))[:-1]],
  "record 1 cut short; its bytes are not UTF-8, and TF's message quotes them")

# --- parse_example: which error wins ---------------------------------------------------------

E("first_bad_record_reported",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(1))), example(("label", Fl(1.0))), example(("label", I(1))), example(("label", I(1, 2)))],
  "records 1 (wrong kind) and 3 (wrong count) are bad")

E("missing_record_before_bad_record",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(1))), example(), example(("label", Fl(1.0)))],
  "record 1 misses the feature, record 2 has the wrong kind")

E("bad_record_before_missing_record",
  ex_spec(label=fixed("int64", [])),
  [example(("label", I(1))), example(("label", Fl(1.0))), example()],
  "record 1 has the wrong kind, record 2 misses the feature")

E("two_bad_features_last_in_wire_order",
  ex_spec(a=fixed("float32", []), b=fixed("int64", [])),
  [example(("a", I(1)), ("b", I(1, 2)))],
  "one record, two bad features: a (wrong kind) then b (wrong count) in wire order")

E("two_bad_features_last_in_wire_order_swapped",
  ex_spec(a=fixed("float32", []), b=fixed("int64", [])),
  [example(("b", I(1, 2)), ("a", I(1)))],
  "the same two bad features, b first on the wire")

E("present_error_before_missing",
  ex_spec(a=fixed("int64", []), b=fixed("int64", [])),
  [example(("b", I(1, 2)))],
  "a is missing (no default) and b has the wrong count, in one record")

E("truncated_record_in_large_batch",
  ex_spec(label=fixed("int64", []), ids=varlen("int64")),
  [example(("label", I(i)), ("ids", I(*range(i % 4)))) for i in range(13)]
  + [example(("label", I(13)))[:-2]]
  + [example(("label", I(i)), ("ids", I(i))) for i in range(14, 20)]
  + [example(("ids", I(1)))],
  "20 records: record 13 truncated, record 19 misses a required feature")

# --- parse_sequence_example ------------------------------------------------------------------

SEQ_SPEC = seq_spec(
    {"len": fixed("int64", [], 0), "id": fixed("bytes", []), "tags": varlen("bytes")},
    {"x": fixseq("float32", [], False), "pts": fixseq("int64", [2], True),
     "words": varlen("bytes"), "w": varlen("float32")})


S("seq_basic",
  SEQ_SPEC,
  [seq_example([("len", I(3)), ("id", B("a")), ("tags", B("t1", "t2"))],
               [("x", [Fl(1.0), Fl(2.0), Fl(3.0)]), ("pts", [I(1, 2), I(3, 4)]),
                ("words", [B("a", "b"), B(), B("c")]), ("w", [Fl(0.5)])]),
   seq_example([("id", B("b"))],
               [("x", [Fl(-1.0)]), ("words", [NOKIND(), B("d", "e", "f")])]),
   seq_example([("tags", B("t3")), ("id", B("c")), ("len", I(1))],
               [("pts", [I(5, 6), I(7, 8), I(9, 10)]), ("x", [Fl(4.0), Fl(5.0)]), ("words", [])])],
  "context FixedLen/VarLen; FixedLenSequence [] and [2] with different lengths (padded with 0); "
  "VarLen sequence as 3-D sparse; lengths")

S("seq_missing_list_not_allowed",
  seq_spec({}, {"x": fixseq("float32", [], False)}),
  [seq_example([], [("x", [Fl(1.0)])]), seq_example([], [("y", [Fl(1.0)])]), seq_example([], None)],
  "allow_missing=False, feature_list absent in records 1 and 2")

S("seq_missing_list_allowed",
  seq_spec({}, {"x": fixseq("float32", [], True), "b": fixseq("bytes", [], True)}),
  [seq_example([], [("x", [Fl(1.0), Fl(2.0)]), ("b", [B("p")])]), seq_example([], None),
   seq_example([], [("y", [Fl(1.0)])])],
  "allow_missing=True: absent = 0 frames, padded with 0.0 / empty bytes")

S("seq_empty_list_not_allowed",
  seq_spec({}, {"x": fixseq("float32", [], False), "v": varlen("int64")}),
  [seq_example([], [("x", [Fl(1.0)]), ("v", [I(1)])]), seq_example([], [("x", []), ("v", [])])],
  "allow_missing=False but the feature_list is present with 0 frames: fine, length 0")

S("seq_all_lists_empty",
  seq_spec({}, {"x": fixseq("int64", [2], False), "v": varlen("int64")}),
  [seq_example([], [("x", []), ("v", [])]), seq_example([], [("x", []), ("v", [I(), NOKIND()])])],
  "every feature_list empty: dense shape [2, 0, 2]; VarLen with frames but no values")

S("seq_frame_wrong_count",
  seq_spec({}, {"x": fixseq("float32", [], False)}),
  [seq_example([], [("x", [Fl(1.0), Fl(2.0), Fl(3.0)])]), seq_example([], [("x", [Fl(1.0), Fl(1.0, 2.0)])])],
  "shape [] and a frame with 2 values (record 1, frame 1)")

S("seq_frame_empty_list",
  seq_spec({}, {"x": fixseq("float32", [], False)}),
  [seq_example([], [("x", [Fl(1.0)])]), seq_example([], [("x", [Fl(), Fl(1.0)])])],
  "shape [] and a frame with an empty float_list (record 1, frame 0)")

S("seq_frame_no_kind",
  seq_spec({}, {"x": fixseq("float32", [], False)}),
  [seq_example([], [("x", [Fl(1.0), Fl(2.0), NOKIND()])])],
  "shape [] and a frame with no list set (record 0, frame 2)")

S("seq_frame_wrong_dtype",
  seq_spec({}, {"x": fixseq("float32", [], False)}),
  [seq_example([], [("x", [Fl(1.0)])]), seq_example([], [("x", [Fl(1.0), Fl(2.0), I(1)])])],
  "an int64_list frame in a float feature_list (record 1, frame 2)")

S("seq_frame_wrong_dtype_empty_list",
  seq_spec({}, {"x": fixseq("float32", [], False)}),
  [seq_example([], [("x", [I()])])],
  "an EMPTY int64_list frame in a float feature_list")

S("seq_shape2_total_not_multiple",
  seq_spec({}, {"pts": fixseq("int64", [2], True)}),
  [seq_example([], [("pts", [I(1, 2)])]), seq_example([], [("pts", [I(1, 2), I(3, 4, 5)])])],
  "shape [2]: record 1 has frames of 2 and 3 values (5 in all, the most of any record)")

S("seq_shape2_frame_wrong_count_total_ok",
  seq_spec({}, {"pts": fixseq("int64", [2], True)}),
  [seq_example([], [("pts", [I(1, 2), I(3, 4), I(5, 6)])]), seq_example([], [("pts", [I(1), I(2, 3, 4)])])],
  "shape [2]: record 1 has frames of 1 and 3 values (4 in all, a multiple of 2)")

S("seq_shape2_wrong_count_not_max",
  seq_spec({}, {"pts": fixseq("int64", [2], True)}),
  [seq_example([], [("pts", [I(1, 2), I(3, 4), I(5, 6)])]), seq_example([], [("pts", [I(1, 2), I(3, 4, 5)])])],
  "shape [2]: record 1 totals 5 values but record 0 has the most (6)")

S("seq_frame_one_byte_feature",
  seq_spec({}, {"x": fixseq("int64", [], True)}),
  [seq_example([], [("x", [I(1)])]),
   ld(2, ld(1, ld(1, b"x") + ld(2, ld(1, ser(I(1))) + ld(1, b"\x1a"))))],
  "a frame whose Feature is 1 byte long (truncated tag)")

S("seq_var_len_3d",
  seq_spec({}, {"ids": varlen("int64"), "xs": varlen("float32"), "words": varlen("bytes")}),
  [seq_example([], [("ids", [I(1, 2), I(), I(3)]), ("xs", [Fl(0.5)]), ("words", [B("a"), NOKIND(), B("b", "c")])]),
   seq_example([], None),
   seq_example([], [("ids", []), ("words", [B(), B(), B(), B("d")])]),
   seq_example([], [("xs", [Fl(), Fl(1.0, 2.0, 3.0)])])],
  "VarLen in feature_lists: indices [record, frame, i], dense_shape [n, max frames, max values]; "
  "empty frames count as frames")

S("seq_var_len_wrong_dtype",
  seq_spec({}, {"words": varlen("bytes")}),
  [seq_example([], [("words", [B("a")])]), seq_example([], [("words", [B("b"), Fl(1.0)])])],
  "a float frame in a bytes VarLen feature_list (record 1, frame 1)")

S("seq_fixed_len_sequence_bytes",
  seq_spec({}, {"s": fixseq("bytes", [2], True)}),
  [seq_example([], [("s", [B("a", "b")])]), seq_example([], [("s", [B("c", ""), B("\x00", "日本")])]),
   seq_example([], None)],
  "bytes FixedLenSequence [2]: padding is empty bytes")

S("seq_specials",
  seq_spec({"c": fixed("float32", [2])}, {"x": fixseq("float32", [], False), "i": fixseq("int64", [], False)}),
  [seq_example([("c", Fl(float("nan"), -0.0))],
               [("x", [Fl(float("inf")), Fl(float("-inf")), Fl(-0.0), Fl(float(np.float32(1e-45)))]),
                ("i", [I(INT64_MIN), I(INT64_MAX), I(-1)])])],
  "NaN/inf/-0.0/denormal and int64 extremes in context and frames")

S("seq_context_missing_no_default",
  seq_spec({"c": fixed("int64", [])}, {}),
  [seq_example([("c", I(1))]), seq_example([("d", I(1))])],
  "context FixedLen without default absent in record 1")

S("seq_context_defaults",
  seq_spec({"c": fixed("int64", [], 5), "p": fixed("float32", [2], [1.5, 2.5]), "s": fixed("bytes", [], "unk")}, {}),
  [seq_example([("c", I(1)), ("p", Fl(3.0, 4.0)), ("s", B("x"))]), seq_example([]), b""],
  "context defaults; an empty record")

S("seq_context_too_many",
  seq_spec({"c": fixed("int64", [], 0)}, {}),
  [seq_example([("c", I(1))]), seq_example([("c", I(1, 2))])],
  "context FixedLen shape [] with 2 values")

S("seq_context_too_few",
  seq_spec({"p": fixed("float32", [2])}, {}),
  [seq_example([("p", Fl(1.0, 2.0))]), seq_example([("p", Fl(1.0))])],
  "context FixedLen shape [2] with 1 value (while another record has 2)")

S("seq_context_too_few_everywhere",
  seq_spec({"p": fixed("float32", [2])}, {}),
  [seq_example([("p", Fl(1.0))]), seq_example([("p", Fl(1.0))])],
  "context FixedLen shape [2] with 1 value in every record")

S("seq_context_empty_list_with_default",
  seq_spec({"c": fixed("int64", [], 7)}, {}),
  [seq_example([("c", I(1))]), seq_example([("c", I())])],
  "context FixedLen with default, present with 0 values")

S("seq_context_no_kind_with_default",
  seq_spec({"c": fixed("int64", [], 7)}, {}),
  [seq_example([("c", I(1))]), seq_example([("c", NOKIND())])],
  "context FixedLen with default, a Feature with no list set (unlike parse_example: not 'missing')")

S("seq_context_no_kind_var_len",
  seq_spec({"v": varlen("int64")}, {}),
  [seq_example([("v", I(1))]), seq_example([("v", NOKIND())]), seq_example([("v", I())])],
  "context VarLen: no-kind and empty list give no values")

S("seq_context_wrong_dtype",
  seq_spec({"c": fixed("int64", [], 0)}, {}),
  [seq_example([("c", I(1))]), seq_example([("c", Fl(1.0))])],
  "context FixedLen int64, float_list present")

S("seq_context_var_len_wrong_dtype",
  seq_spec({"v": varlen("bytes")}, {}),
  [seq_example([("v", I(1))])],
  "context VarLen bytes, int64_list present")

S("seq_context_var_len_all_dtypes",
  seq_spec({"i": varlen("int64"), "f": varlen("float32"), "b": varlen("bytes")}, {}),
  [seq_example([("i", I(1, 2)), ("f", Fl(0.5)), ("b", B("a"))]), seq_example([]),
   seq_example([("b", B("x", "y", "z")), ("i", I(3))])],
  "context VarLen of each dtype")

S("seq_dup_context_key",
  seq_spec({"c": fixed("int64", []), "v": varlen("int64")}, {}),
  [seq_example([("c", I(1)), ("v", I(1, 2, 3))]) + seq_example([("c", I(2)), ("v", I(4))])],
  "context map with the same keys twice")

S("seq_dup_context_key_last_no_kind",
  seq_spec({"c": fixed("int64", [], 7)}, {}),
  [seq_example([("c", I(1))]) + seq_example([("c", NOKIND())]), seq_example([("c", I(2))])],
  "context key twice, the last a Feature with no list")

S("seq_dup_feature_list_key",
  seq_spec({}, {"x": fixseq("int64", [], False), "v": varlen("int64")}),
  [seq_example([], [("x", [I(1), I(2)]), ("v", [I(1)])]) + seq_example([], [("x", [I(3)]), ("v", [I(2, 3)])])],
  "feature_lists map with the same keys twice")

S("seq_dup_feature_list_key_last_empty",
  seq_spec({}, {"x": fixseq("int64", [], False)}),
  [seq_example([], [("x", [I(1), I(2)])]) + seq_example([], [("x", [])])],
  "feature_list key twice, the last with 0 frames")

S("seq_default_value_rejected",
  seq_spec({}, {"x": fixseq("int64", [], True, 9)}),
  [seq_example([], [("x", [I(1)])])],
  "a default_value on a feature_list FixedLenSequence (Python ValueError, before parsing)")

S("seq_context_fixed_len_sequence_rejected",
  seq_spec({"c": fixseq("int64", [], True)}, {}),
  [seq_example([("c", I(1))])],
  "FixedLenSequence in the context spec (Python ValueError)")

S("seq_empty_batch",
  SEQ_SPEC, [],
  "no records, with a context FixedLen in the spec")

S("seq_empty_batch_with_context_default",
  seq_spec({"c": fixed("int64", [], 5)}, {"x": fixseq("float32", [], True)}), [],
  "no records, the context FixedLen has a default")

S("seq_empty_batch_no_context_fixed_len",
  seq_spec({"v": varlen("int64")}, {"x": fixseq("float32", [2], False), "w": varlen("bytes")}), [],
  "no records, no context FixedLen in the spec")

S("seq_context_default_all_missing",
  seq_spec({"c": fixed("int64", [], 5), "v": varlen("int64")}, {}),
  [seq_example([("v", I(1))]), seq_example([])],
  "a context FixedLen with a default that no record has")

S("seq_truncated",
  seq_spec({"c": fixed("int64", [], 0)}, {"x": fixseq("float32", [], True)}),
  [seq_example([("c", I(1))], [("x", [Fl(1.0)])]), seq_example([("c", I(2))], [("x", [Fl(2.0)])])[:-1]],
  "record 1 is cut short by one byte")

S("seq_map_entry_value_before_key",
  seq_spec({"c": fixed("int64", [], 0)}, {}),
  [seq_example([("c", I(1))]), ld(1, ld(1, ld(2, ser(I(5))) + ld(1, b"c")))],
  "a context map entry with the value before the key (parse_example accepts this)")

S("seq_unrelated_not_checked",
  seq_spec({"c": fixed("int64", [], 0)}, {"x": fixseq("float32", [], True)}),
  [ld(1, raw_entry(b"junk", b"\xff\xff") + raw_entry(b"c", ser(I(3))))
   + ld(2, raw_entry(b"junklist", b"\x0a\x05\xff") + raw_entry(b"x", ld(1, ser(Fl(1.5)))))
   + tag(3, 0) + varint(1)],
  "garbled values of context features / feature_lists not in the spec, and an unknown top-level field")

# --- larger random ("happy") cases -------------------------------------------------------------


def rand_f32(rng):
    # Finite float32 bit patterns of every exponent (no NaN: those are covered by float_specials).
    while True:
        bits = rng.getrandbits(32)
        if (bits >> 23) & 0xFF != 0xFF:
            return float(np.uint32(bits).view(np.float32))


def rand_i64(rng):
    k = rng.choice([7, 16, 31, 40, 63])
    return rng.randint(-(1 << k), (1 << k) - 1)


def rand_bytes(rng):
    return bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 3, 8, 20])))


def random_examples(seed, n):
    rng = random.Random(seed)
    recs = []
    for _ in range(n):
        feats = []
        if rng.random() < 0.8:
            feats.append(("label", I(rand_i64(rng))))
        if rng.random() < 0.7:
            feats.append(("pair", Fl(rand_f32(rng), rand_f32(rng))))
        if rng.random() < 0.7:
            feats.append(("name", B(rand_bytes(rng))))
        if rng.random() < 0.9:
            feats.append(("tokens", I(*[rand_i64(rng) for _ in range(rng.randint(0, 6))])))
        if rng.random() < 0.8:
            feats.append(("weights", Fl(*[rand_f32(rng) for _ in range(rng.randint(0, 5))])))
        if rng.random() < 0.8:
            feats.append(("tags", B(*[rand_bytes(rng) for _ in range(rng.randint(0, 4))])))
        if rng.random() < 0.8:
            feats.append(("seq", Fl(*[rand_f32(rng) for _ in range(2 * rng.randint(0, 4))])))
        feats.append(("grid", I(*[rand_i64(rng) for _ in range(4)])))
        for j in range(rng.randint(0, 3)):  # unrelated features
            feats.append(("extra%d" % j, rng.choice([I(1, 2), Fl(0.5), B("zz"), NOKIND()])))
        if rng.random() < 0.2:
            feats.append(("noise", I(rng.randint(0, 9))))
        rng.shuffle(feats)
        recs.append(example(*feats))
    return recs


HAPPY_SPEC = ex_spec(
    label=fixed("int64", [], 0), pair=fixed("float32", [2], [1.5, 2.5]), name=fixed("bytes", [], "unk"),
    grid=fixed("int64", [2, 2]), tokens=varlen("int64"), weights=varlen("float32"), tags=varlen("bytes"),
    seq=fixseq("float32", [2], True, 0.0))

E("happy_mixed_64", HAPPY_SPEC, random_examples(1001, 64),
  "64 random records (seed 1001), every form and dtype, features in random wire order, unrelated extras")

E("happy_mixed_200", HAPPY_SPEC, random_examples(2002, 200),
  "200 random records (seed 2002): several records per TF minibatch")


def random_sequence_examples(seed, n):
    rng = random.Random(seed)
    recs = []
    for _ in range(n):
        ctx = []
        if rng.random() < 0.7:
            ctx.append(("len", I(rand_i64(rng))))
        ctx.append(("id", B(rand_bytes(rng))))
        if rng.random() < 0.6:
            ctx.append(("tags", B(*[rand_bytes(rng) for _ in range(rng.randint(0, 3))])))
        rng.shuffle(ctx)
        lists = [("x", [Fl(rand_f32(rng)) for _ in range(rng.randint(0, 5))])]
        if rng.random() < 0.7:
            lists.append(("pts", [I(rand_i64(rng), rand_i64(rng)) for _ in range(rng.randint(0, 4))]))
        if rng.random() < 0.8:
            lists.append(("words", [B(*[rand_bytes(rng) for _ in range(rng.randint(0, 3))])
                                    for _ in range(rng.randint(0, 4))]))
        if rng.random() < 0.5:
            lists.append(("w", [rng.choice([NOKIND(), Fl(*[rand_f32(rng) for _ in range(rng.randint(0, 3))])])
                                for _ in range(rng.randint(0, 3))]))
        if rng.random() < 0.3:
            lists.append(("other", [I(1)]))
        rng.shuffle(lists)
        recs.append(seq_example(ctx, lists))
    return recs


S("happy_sequence_48", SEQ_SPEC, random_sequence_examples(3003, 48),
  "48 random SequenceExamples (seed 3003)")

# ---------------------------------------------------------------------------------------------


def main():
    os.makedirs(CASES_DIR, exist_ok=True)
    wanted = set()
    observations = {}
    for c in CASES:
        expect, warnings, py_note = evaluate(c["api"], c["spec"], c["records"])
        obs = {"note": c["note"], "warnings": warnings}
        if py_note:
            obs["python_raised"] = py_note
        if "error" in expect:
            names = ["r%d" % i for i in range(len(c["records"]))]
            named = evaluate(c["api"], c["spec"], c["records"], names)[0]
            obs["message_with_names"] = named.get("error", {}).get("message")
        observations[c["name"]] = obs
        fixture = {"name": c["name"], "api": c["api"], "spec": c["spec"],
                   "records": [b64(r) for r in c["records"]], "expect": expect}
        path = os.path.join(CASES_DIR, c["name"] + ".json")
        wanted.add(os.path.basename(path))
        text = dump(fixture) + "\n"
        assert json.loads(text) == fixture, c["name"]  # the compact writer loses nothing
        with open(path, "w", encoding="ascii", newline="\n") as f:
            f.write(text)
        if "error" in expect:
            summary = "ERROR rec=%s feat=%s: %s" % (expect["error"]["record"], expect["error"]["feature"],
                                                    expect["error"]["message"][:150].replace("\n", "\\n"))
        else:
            summary = "ok"
        print("%-45s %s%s" % (c["name"], summary, "  [%d warning(s)]" % len(warnings) if warnings else ""))
    for old in sorted(os.listdir(CASES_DIR)):
        if old.endswith(".json") and old not in wanted:
            os.remove(os.path.join(CASES_DIR, old))
    with open(os.path.join(HERE, "observations.json"), "w", encoding="ascii", newline="\n") as f:
        f.write(dump(observations) + "\n")
    import google.protobuf
    print("%d cases; python %s, tensorflow %s, numpy %s, protobuf %s" % (
        len(CASES), sys.version.split()[0], tf.__version__, np.__version__, google.protobuf.__version__))


if __name__ == "__main__":
    main()
