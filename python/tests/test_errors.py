"""Hostile files raise recordwire.Error with the kind the manifest gives;
a Rust panic never crosses into Python."""

import json

import pytest

import recordwire
from conftest import TESTDATA

BAD = TESTDATA / "bad"


def manifest():
    return [
        pytest.param(entry, id=entry["file"])
        for entry in json.loads((BAD / "manifest.json").read_text())
    ]


def read_all(path):
    ds = recordwire.Dataset(str(path))
    for i in range(len(ds)):
        ds.raw(i)
        if ds.payload != "raw":
            ds[i]


@pytest.mark.parametrize("entry", manifest())
def test_bad_file_raises_its_kind(entry):
    with pytest.raises(recordwire.Error) as info:
        read_all(BAD / entry["file"])
    err = info.value
    assert err.kind == entry["kind"], str(err)
    assert err.file is not None and err.file.endswith(entry["file"])
    if err.record is not None and entry.get("record") is not None:
        if entry["kind"] == "compression_error":
            # A compressed file is indexed through its checkpoints, whose
            # inflater hands out every byte the damaged stream still gives;
            # the streaming reader the manifest was made with (zlib's) holds
            # the last ones back, so it stops at an earlier record.
            assert err.record >= entry["record"], str(err)
        else:
            assert err.record == entry["record"]
    assert str(err)


def test_error_fields_of_a_crc_mismatch():
    with pytest.raises(recordwire.Error) as info:
        read_all(BAD / "tf_data_crc_mismatch.tfrecord")
    err = info.value
    assert err.kind == "data_crc_mismatch"
    assert isinstance(err.record, int) and isinstance(err.offset, int)
    # Without CRC checks the record is delivered.
    ds = recordwire.Dataset(str(BAD / "tf_data_crc_mismatch.tfrecord"), verify_crc=False)
    for i in range(len(ds)):
        ds.raw(i)


def test_missing_file_is_an_io_error(tmp_path):
    with pytest.raises(recordwire.Error) as info:
        recordwire.Dataset(str(tmp_path / "nope.tfrecord"))
    assert info.value.kind == "io_error"
    assert info.value.record is None


def test_a_panic_becomes_recordwire_error():
    from recordwire import _native

    with pytest.raises(recordwire.PanicError) as info:
        _native._panic_for_test("boom")
    assert isinstance(info.value, recordwire.Error)
    assert isinstance(info.value, Exception)
    assert info.value.kind == "panic"
    assert "boom" in str(info.value)
