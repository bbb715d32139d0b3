"""`recordwire.infer_spec` and `decode(ids, "auto")` against `recordwire
inspect --spec`; `Dataset(..., on_error="skip")` against `recordwire cat
--on-error skip`."""

import base64
import json
import pickle
import re
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

import recordwire
from conftest import TESTDATA, real_files
from test_orders import cli

REF = TESTDATA / "ref"
BAD = TESTDATA / "bad"


def cli_spec(files):
    """`inspect --spec FILES`: (exit status, the spec's JSON or None, the
    inference's notes; not the notes on how a file's payload was chosen,
    which name the file)."""
    r = subprocess.run([cli(), "inspect", "--spec", *map(str, files)], capture_output=True, text=True)
    notes = [
        line[len("note: "):]
        for line in r.stderr.splitlines()
        if line.startswith("note: ") and not line[len("note: "):].startswith(tuple(map(str, files)))
    ]
    return r.returncode, (json.loads(r.stdout) if r.returncode == 0 else None), notes


def py_spec(source):
    """`infer_spec(source)`: the spec's JSON and the notes warned."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = recordwire.infer_spec(source)
    # Not the notes on a file's payload (recordwire.PayloadWarning), which
    # name the file, as cli_spec leaves them out.
    notes = [
        str(w.message)[len("infer_spec: "):]
        for w in caught
        if issubclass(w.category, UserWarning) and not issubclass(w.category, recordwire.PayloadWarning)
    ]
    return json.loads(spec.to_json()), notes


@pytest.mark.parametrize(
    "files",
    [
        ["examples.tfrecord"],
        ["examples.tfrecord.gz"],
        ["sequence_examples.tfrecord"],
        ["ofrecord.part-0"],
        ["small.tfrecord"],
        ["examples.tfrecord", "examples.tfrecord.zlib", "small.tfrecord"],
    ],
)
def test_infer_spec_equals_inspect_spec(files):
    paths = [REF / f for f in files]
    rc, want, want_notes = cli_spec(paths)
    assert rc == 0
    got, notes = py_spec([str(p) for p in paths])
    assert got == want
    assert notes == want_notes
    # From an opened dataset: the same.
    ds = recordwire.Dataset([str(p) for p in paths])
    assert py_spec(ds) == (want, want_notes)


def test_infer_spec_refuses_raw_and_mixed_payloads():
    with pytest.raises(ValueError, match="not raw bytes"):
        recordwire.infer_spec(str(REF / "examples.tfrecord"), payload="raw")
    with pytest.raises(ValueError, match="one spec reads one payload"):
        recordwire.infer_spec([str(REF / "examples.tfrecord"), str(REF / "ofrecord.part-0")])


def test_infer_spec_raises_at_a_record_that_does_not_decode():
    rc, _, _ = cli_spec([BAD / "tf_decode_error.tfrecord"])
    assert rc == 1
    with pytest.raises(recordwire.Error) as e:
        recordwire.infer_spec(str(BAD / "tf_decode_error.tfrecord"))
    assert (e.value.kind, e.value.record) == ("decode_error", 2)
    assert e.value.file.endswith("tf_decode_error.tfrecord")


def test_the_notes_are_warned(tmp_path):
    # A feature of different kinds in different records is left out, with a note.
    w = recordwire.Writer(tmp_path / "n.tfrecord")
    w.write({"a": np.array([1], dtype=np.int64), "mixed": np.array([1], dtype=np.int64)})
    w.write({"a": np.array([2], dtype=np.int64), "mixed": np.array([1.5], dtype=np.float32)})
    w.close()
    rc, want, want_notes = cli_spec([tmp_path / "n.tfrecord"])
    assert rc == 0 and want_notes, want_notes
    with pytest.warns(UserWarning, match="infer_spec: "):
        spec = recordwire.infer_spec(str(tmp_path / "n.tfrecord"))
    assert json.loads(spec.to_json()) == want
    assert py_spec(str(tmp_path / "n.tfrecord")) == (want, want_notes)


def same(a, b):
    """Whether two decoded values are equal: arrays, column tuples, lists and
    dicts of them, memoryviews by their bytes."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and (a.dtype, a.shape, a.tobytes()) == (b.dtype, b.shape, b.tobytes())
    if isinstance(a, memoryview) or isinstance(b, memoryview):
        return bytes(a) == bytes(b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", ["examples.tfrecord", "examples.tfrecord.gz", "sequence_examples.tfrecord", "ofrecord.part-0"])
def test_decode_auto_equals_decode_by_the_inferred_spec(name):
    ds = recordwire.Dataset(str(REF / name))
    ids = np.arange(len(ds))[::-1].copy()
    auto = ds.decode(ids, "auto")
    spec = recordwire.infer_spec(ds)
    assert spec.to_json() == ds.auto_spec.to_json()
    by_spec = ds.decode(ids, spec)
    assert same(auto, by_spec)
    # Kept on the dataset: inferred once.
    assert ds.auto_spec is ds.auto_spec
    kept = ds.auto_spec
    ds.decode(ids[:2], "auto")
    assert ds.auto_spec is kept
    # A reopened dataset infers it again, to the same spec.
    again = pickle.loads(pickle.dumps(ds))
    assert again.auto_spec.to_json() == kept.to_json()


def test_the_real_files_infer_as_the_cli_does():
    """Each real file (TFX, Lingvo, Waymo, OneFlow, ...), and each group of
    them of one payload: the spec and notes of `inspect --spec`, or an error
    where it fails."""
    real = real_files()
    if real is None:
        return
    files = [str(f) for f in real]
    assert len(files) >= 20
    by_payload = {}
    for f in files:
        rc, want, want_notes = cli_spec([f])
        if rc != 0:
            with pytest.raises((ValueError, recordwire.Error)):
                py_spec(f)
            continue
        assert py_spec(f) == (want, want_notes), f
        by_payload.setdefault(recordwire.Dataset(f).payload, []).append(f)
    assert len(by_payload) >= 2
    for group in by_payload.values():
        rc, want, want_notes = cli_spec(group)
        assert rc == 0
        assert py_spec(group) == (want, want_notes), group


BAD_FILES = sorted(
    f.name for f in BAD.iterdir() if f.is_file() and f.suffix not in (".json", ".jsonl") and not f.name.startswith("base5")
)
MANIFEST = {e["file"]: e for e in json.loads((BAD / "manifest.json").read_text())}


def cli_cat_skip(path):
    """`cat --on-error skip --payload raw`: (exit status, payloads, errors
    as (kind, offset), skipped ranges)."""
    r = subprocess.run(
        [cli(), "cat", "--on-error", "skip", "--payload", "raw", str(path)], capture_output=True, text=True
    )
    payloads = [base64.b64decode(json.loads(line)["raw"]) for line in r.stdout.splitlines()]
    errors = [(m[1], int(m[2])) for m in re.finditer(r"error\[(\w+)\]: .*? at byte (\d+)", r.stderr)]
    ranges = [(int(m[1]), int(m[2])) for m in re.finditer(r"skipped bytes (\d+)\.\.(\d+)", r.stderr)]
    return r.returncode, payloads, errors, ranges


@pytest.mark.parametrize("name", BAD_FILES)
def test_on_error_skip_gives_what_cat_on_error_skip_prints(name):
    path = BAD / name
    rc, payloads, errors, ranges = cli_cat_skip(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            ds = recordwire.Dataset(str(path), on_error="skip", payload="raw")
        except recordwire.Error:
            # Nothing readable at all (the CLI delivers nothing either).
            assert payloads == [] and rc != 0, (name, rc, len(payloads))
            return
    assert [bytes(v) for v in ds.get_many(range(len(ds)), raw=True)] == payloads, name
    assert [(s.kind, s.start) for s in ds.skipped] == errors, name
    for r in ranges:
        assert r in [(s.start, s.end) for s in ds.skipped], (name, r)
    for s in ds.skipped:
        assert s.file == str(path) and s.start <= s.end
        assert f"[{s.kind}]" in s.message and str(path) in s.message
    warned = [w for w in caught if issubclass(w.category, recordwire.SkippedWarning)]
    if ds.skipped:
        assert len(warned) == 1 and issubclass(recordwire.SkippedWarning, RuntimeWarning)
        for s in ds.skipped:
            assert f"{s.file}: bytes {s.start}..{s.end} skipped [{s.kind}]" in str(warned[0].message)
    else:
        assert warned == []
    expected = MANIFEST.get(name, {}).get("skip_delivered")
    if expected is not None and name.endswith((".tfrecord", ".ofrecord", ".gz", ".zlib")) and "decode" not in name:
        assert len(ds) == expected, name


def test_on_error_fail_raises_where_skip_reads_the_valid_records():
    path = str(BAD / "tf_truncated_data.tfrecord")
    with pytest.raises(recordwire.Error) as e:
        recordwire.Dataset(path)
    assert e.value.kind == "truncated_data"
    with pytest.warns(recordwire.SkippedWarning, match=r"bytes 393\.\.462 skipped \[truncated_data\]"):
        ds = recordwire.Dataset(path, on_error="skip")
    assert len(ds) == 3
    assert ds.skipped == [recordwire.Skipped(path, 393, 462, "truncated_data", ds.skipped[0].message)]
    # Reopened (pickled) with the same policy.
    with pytest.warns(recordwire.SkippedWarning):
        again = pickle.loads(pickle.dumps(ds))
    assert len(again) == 3 and again.skipped == ds.skipped
    with pytest.raises(ValueError, match="on_error"):
        recordwire.Dataset(path, on_error="ignore")
    with pytest.raises(ValueError, match="index="):
        recordwire.Dataset(path, on_error="skip", index=path + ".rwindex")


def test_a_clean_file_opened_with_skip_is_the_same(tmp_path):
    path = str(REF / "examples.tfrecord")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = recordwire.Dataset(path, on_error="skip")
    clean = recordwire.Dataset(path)
    assert ds.skipped == [] and len(ds) == len(clean)
    assert [bytes(v) for v in ds.get_many(range(len(ds)), raw=True)] == [
        bytes(v) for v in clean.get_many(range(len(clean)), raw=True)
    ]


def test_an_index_built_over_damage_is_never_written(tmp_path):
    data = (BAD / "tf_data_crc_mismatch.tfrecord").read_bytes()
    path = tmp_path / "d.tfrecord"
    path.write_bytes(data)
    with pytest.warns(recordwire.SkippedWarning, match="data_crc_mismatch"):
        ds = recordwire.Dataset(str(path), on_error="skip")
    assert len(ds) == 4
    for args in ({}, {"path": tmp_path / "x.dali", "format": "dali"}):
        with pytest.raises(recordwire.Error, match="damaged"):
            ds.write_index(**args)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.tfrecord"]


def test_many_damaged_regions_are_summarised(tmp_path):
    from conftest import write_tfrecord

    path = tmp_path / "many.tfrecord"
    write_tfrecord(path, [bytes([i]) * 3 for i in range(30)])
    data = bytearray(path.read_bytes())
    frame = 12 + 3 + 4
    for k in range(0, 30, 2):  # 15 damaged data CRCs
        data[k * frame + 12] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.warns(recordwire.SkippedWarning) as caught:
        ds = recordwire.Dataset(str(path), on_error="skip", payload="raw")
    assert len(ds) == 15 and len(ds.skipped) == 15
    assert [bytes(v) for v in ds.get_many(range(15), raw=True)] == [bytes([i]) * 3 for i in range(1, 30, 2)]
    assert [(s.start, s.end, s.kind) for s in ds.skipped] == [
        (k * frame, (k + 1) * frame, "data_crc_mismatch") for k in range(0, 30, 2)
    ]
    text = str(caught[0].message)
    assert text.startswith("on_error='skip': 15 damaged regions skipped")
    assert text.count(" skipped [data_crc_mismatch]") == 10
    assert text.endswith("... and 5 more (see ds.skipped)")
