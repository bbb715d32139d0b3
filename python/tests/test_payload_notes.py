"""Files whose records are not tf.Examples (a TensorBoard event file, an ELWC
file) are warned once per dataset, with the note ``recordwire cat`` prints
(the same Rust text), the ``payload="raw"`` hint, and the message they look
like; a reopened (unpickled) dataset and the loader do not warn again."""

import pickle
import struct
import subprocess
import warnings

import pytest

import recordwire
from conftest import TESTDATA, real_files
from test_arrow import recordwire_bin

EVENTS = "tensorflow_lingvo__lingvo__core__ops__testdata__events.out.tfevents.test"
ELWC = "tensorflow_ranking__tensorflow_ranking__extension__testdata__tfrbert_elwc_test.tfrecord"


def event(step):
    """A TensorBoard ``Event {wall_time, step}``, without the ``file_version``
    record that begins an event file (with it, ``recordwire cat`` detects the
    file as events and prints them by the built-in schema, where this test
    compares its note on records read as tf.Example)."""
    return b"\x09" + struct.pack("<d", 1.7e9 + step) + bytes([0x10, step])


def events_file(tmp_path, n=5):
    path = tmp_path / "events.out.tfevents"
    with recordwire.Writer(path, payload="raw") as w:
        for i in range(n):
            w.write(event(i))
    return str(path)


def payload_warnings(caught):
    return [str(w.message) for w in caught if issubclass(w.category, recordwire.PayloadWarning)]


def test_an_event_file_is_warned_once_with_the_cli_note(tmp_path):
    path = events_file(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = recordwire.Dataset(path)
    (note,) = payload_warnings(caught)
    assert issubclass(recordwire.PayloadWarning, UserWarning)
    assert note.startswith(f"note: {path}: 5 of 5 records hold fields tf.Example does not have")
    assert "TensorBoard tensorflow.Event" in note and 'payload="raw" shows the bytes' in note
    # The CLI's text, but for the hint.
    cli = subprocess.run([recordwire_bin(), "cat", path], capture_output=True, text=True)
    assert cli.stderr.strip() == note.replace('payload="raw"', "--payload raw")
    assert ds[0] == {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = pickle.loads(pickle.dumps(ds))
        recordwire.Loader(ds, batch_size=2)
        raw = recordwire.Dataset(path, payload="raw")
    assert payload_warnings(caught) == []
    assert len(again) == 5 and bytes(raw.raw(0)) == event(0)


def test_clean_files_are_not_warned(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        recordwire.Dataset(str(TESTDATA / "ref" / "examples.tfrecord"))
        recordwire.Dataset(str(TESTDATA / "ref" / "small.tfrecord"))


@pytest.mark.parametrize(
    "name,looks",
    [(EVENTS, "TensorBoard tensorflow.Event"), (ELWC, "TensorFlow Ranking ExampleListWithContext (ELWC)")],
)
def test_real_files_say_what_they_look_like(name, looks):
    files = real_files()
    if files is None:
        return
    (path,) = [f for f in files if f.name == name]
    with pytest.warns(recordwire.PayloadWarning, match=r"this may not be a tf\.Example file, they look like") as caught:
        recordwire.Dataset(str(path))
    (note,) = payload_warnings(caught)
    assert looks in note and 'payload="raw"' in note
