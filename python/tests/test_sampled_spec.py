"""``Loader(spec="auto")`` infers its spec from a sample of the records, not
from every record before the first batch: a damaged record later in the
file raises at its batch, a remote object is not downloaded whole before
batch 0, a feature the sample always saw but some record lacks reads with
a default, and the warning names ``recordwire.infer_spec(paths)``."""

import json
import warnings

import numpy as np
import pytest

import recordwire
from recordwire._dataset import SAMPLE_RECORDS

N = 20_000
# Outside every run of the sample (runs of 16 records starting at
# k * N / 256): 12,343..12,359 and 12,421..12,437 are read, 12,390 is not.
UNSAMPLED = 12_390


def write(path, n=N, lacking=None, pad=0):
    with recordwire.Writer(path) as w:
        for i in range(n):
            record = {"label": i, "x": np.full(2, i, dtype=np.float32), "tokens": np.arange(i % 4, dtype=np.int64)}
            if pad:
                record["pad"] = b"p" * pad
            if i == lacking:
                del record["x"]
            w.write(record)
    return str(path)


def test_a_damaged_record_later_in_the_file_raises_at_its_batch(tmp_path):
    path = write(tmp_path / "a.tfrecord")
    ds = recordwire.Dataset(path)
    payload = bytes(ds.raw(UNSAMPLED))
    data = bytearray(open(path, "rb").read())
    start = data.find(payload)
    assert start > 0 and data.find(payload, start + 1) == -1
    data[start + 3] ^= 0x20  # the data CRC no longer matches
    open(path, "wb").write(bytes(data))
    with pytest.warns(UserWarning, match=r"sample of \d+ of 20000 records.*recordwire\.infer_spec\(paths\)"):
        loader = recordwire.Loader(path, batch_size=1000, order="sequential")
    seen = []
    with pytest.raises(recordwire.Error) as info:
        for batch in loader:
            seen.append(batch.index)
    assert seen == list(range(12))
    assert info.value.kind == "data_crc_mismatch" and info.value.record == UNSAMPLED


def test_a_feature_some_unsampled_record_lacks_reads_with_a_default(tmp_path):
    path = write(tmp_path / "b.tfrecord", lacking=UNSAMPLED)
    with pytest.warns(UserWarning, match=r"get a default.*\bx\b") as noted:
        loader = recordwire.Loader(path, batch_size=1000, order="sequential")
    assert len([w for w in noted if "sample of" in str(w.message)]) == 1
    doc = json.loads(loader.spec.to_json())
    assert doc["features"]["x"] == {"form": "fixed_len", "dtype": "float32", "shape": [2], "default": [0.0, 0.0]}
    assert doc["features"]["tokens"]["form"] == "var_len"
    rows = np.concatenate([b["x"] for b in loader])
    assert rows.shape == (N, 2)
    assert rows[UNSAMPLED].tolist() == [0.0, 0.0] and rows[UNSAMPLED + 1].tolist() == [UNSAMPLED + 1] * 2
    # The full inference sees the record without it: var_len.
    assert json.loads(recordwire.infer_spec(path).to_json())["features"]["x"]["form"] == "var_len"


def test_a_sample_of_every_record_is_the_full_inference_and_says_nothing(tmp_path):
    path = write(tmp_path / "c.tfrecord", n=300, lacking=7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loader = recordwire.Loader(path, batch_size=100)
    assert loader.spec.to_json() == recordwire.infer_spec(path).to_json()
    assert json.loads(loader.spec.to_json())["features"]["x"]["form"] == "var_len"


def test_a_missing_feature_without_a_default_suggests_the_full_inference(tmp_path):
    path = write(tmp_path / "d.tfrecord", n=50, lacking=20)
    ds = recordwire.Dataset(path)
    spec = {"x": recordwire.FixedLen(2, "float32")}
    with pytest.raises(recordwire.Error, match=r"missing, and the spec gives no default.*recordwire\.infer_spec\(paths\)") as info:
        ds.decode(range(50), spec)
    assert info.value.kind == "feature_error" and info.value.record == 20


def test_auto_spec_of_a_remote_object_reads_a_sample_before_batch_0(range_server, tmp_path):
    path = write(tmp_path / "e.tfrecord", pad=300)
    data = open(path, "rb").read()
    range_server.objects["/sample/e.tfrecord"] = data
    url = f"{range_server.base}/sample/e.tfrecord"
    options = {"allow_http": "true", "cache_dir": str(tmp_path / "cache")}
    recordwire.Dataset(url, storage_options=options)  # indexed once, then from the cache
    range_server.reset()
    with pytest.warns(UserWarning, match="sample of"):
        loader = recordwire.Loader(url, batch_size=64, order="sequential", storage_options=options)
    before = range_server.bytes_sent
    first = next(iter(loader))
    assert len(first["label"]) == 64
    # The sample: at most SAMPLE_RECORDS records of ~360 bytes, spread over
    # the object, not the object (7.3 MB).
    assert before < SAMPLE_RECORDS * 400 + (1 << 20), (before, len(data))
    assert before < len(data) / 3, (before, len(data))
