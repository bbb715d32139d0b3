"""Hostile files raise recordwire.Error with the kind the manifest gives;
a Rust panic never crosses into Python."""

import errno
import json
import pickle

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


@pytest.mark.parametrize("cls", [recordwire.Dataset, recordwire.GzDataset])
def test_missing_file_is_a_file_not_found_error(tmp_path, cls):
    path = str(tmp_path / "nope.tfrecord")
    # What a user writes for open() catches it.
    with pytest.raises(FileNotFoundError) as info:
        cls(path)
    err = info.value
    assert type(err) is recordwire.NotFoundError
    assert isinstance(err, recordwire.IoError) and isinstance(err, recordwire.Error)
    assert isinstance(err, OSError)
    assert not isinstance(err, PermissionError)
    assert err.errno == errno.ENOENT
    assert err.strerror and err.filename == path
    assert err.kind == "io_error" and err.file == path
    # The message stays recordwire's (OSError's own str would differ).
    assert str(err).startswith("[io_error]") and path in str(err), str(err)


def test_writer_into_a_missing_folder_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        recordwire.Writer(tmp_path / "no-such-folder" / "out.tfrecord")
    assert isinstance(info.value, recordwire.Error)
    assert info.value.errno == errno.ENOENT


@pytest.mark.parametrize(
    "code,cls,builtin",
    [
        (errno.ENOENT, recordwire.NotFoundError, FileNotFoundError),
        (errno.EACCES, recordwire.PermissionDeniedError, PermissionError),
        (errno.EPERM, recordwire.PermissionDeniedError, PermissionError),
        (errno.EIO, recordwire.IoError, OSError),
        (errno.EISDIR, recordwire.IoError, OSError),
    ],
)
def test_io_errors_are_the_matching_os_errors(code, cls, builtin):
    from recordwire import _native

    with pytest.raises(builtin) as info:
        _native._io_error_for_test(code, "some/file")
    err = info.value
    assert type(err) is cls
    assert isinstance(err, recordwire.Error) and isinstance(err, recordwire.IoError)
    assert err.errno == code and err.filename == "some/file" and err.kind == "io_error"
    # Pickles (a DataLoader worker sends it to the main process) as itself.
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls
    assert (back.kind, back.errno, back.filename, str(back)) == (err.kind, err.errno, err.filename, str(err))


def test_format_errors_are_not_os_errors():
    with pytest.raises(recordwire.Error) as info:
        read_all(BAD / "tf_data_crc_mismatch.tfrecord")
    assert not isinstance(info.value, OSError)


def test_a_panic_becomes_recordwire_error():
    from recordwire import _native

    with pytest.raises(recordwire.PanicError) as info:
        _native._panic_for_test("boom")
    assert isinstance(info.value, recordwire.Error)
    assert isinstance(info.value, Exception)
    assert info.value.kind == "panic"
    assert "boom" in str(info.value)


def test_errors_pickle_by_reference_as_recordwire_classes():
    # cloudpickle (Ray tasks, DataLoader workers) pickles by value a class
    # whose module it cannot import: the copy would not be recordwire.Error.
    cloudpickle = pytest.importorskip("cloudpickle", reason="ray[data] brings it; ./test.sh installs ray")

    for cls in (recordwire.Error, recordwire.PanicError, recordwire.IoError):
        assert cls.__module__ == "recordwire._native"
    with pytest.raises(recordwire.Error) as info:
        read_all(BAD / "tf_data_crc_mismatch.tfrecord")
    back = cloudpickle.loads(cloudpickle.dumps(info.value))
    assert type(back) is recordwire.Error
    assert (back.kind, back.file, back.record, back.offset) == (
        info.value.kind,
        info.value.file,
        info.value.record,
        info.value.offset,
    )
