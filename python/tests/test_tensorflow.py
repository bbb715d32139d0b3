"""Against TensorFlow itself: tf.train.Example and tf.train.SequenceExample
parsing of every reference record, tf.io.parse_example of a batch, and tf.data reading what Writer
wrote (plain and compressed)."""

import numpy as np
import pytest

import recordwire
from conftest import TESTDATA

tf = pytest.importorskip("tensorflow", reason="tensorflow-cpu is installed by ./test.sh and .ci/run: it must not be missing there")

REF = TESTDATA / "ref"


def tf_values(feature):
    kind = feature.WhichOneof("kind")
    if kind is None:
        return None
    return list(getattr(feature, kind).value)


@pytest.mark.parametrize("name", ["examples.tfrecord", "examples.tfrecord.gz", "examples.tfrecord.zlib", "small.tfrecord"])
def test_records_equal_tf_train_example(name):
    ds = recordwire.Dataset(str(REF / name))
    compression = {"gz": "GZIP", "zlib": "ZLIB"}.get(name.rsplit(".", 1)[-1], "")
    tf_records = [r.numpy() for r in tf.data.TFRecordDataset(str(REF / name), compression_type=compression)]
    assert len(tf_records) == len(ds)
    for i, payload in enumerate(tf_records):
        assert bytes(ds.raw(i)) == payload
        ex = tf.train.Example.FromString(payload)
        got = ds[i]
        assert sorted(got) == sorted(ex.features.feature.keys()), i
        for key, feature in ex.features.feature.items():
            want = tf_values(feature)
            value = got[key]
            if want is None or isinstance(value, list):
                assert [bytes(v) for v in value] == (want or []), (i, key)
            else:
                assert np.asarray(want, dtype=value.dtype).tobytes() == value.tobytes(), (i, key)


def check_tf_feature(value, feature, where):
    """A value of ``ds[i]`` against a ``tf.train.Feature``."""
    want = tf_values(feature)
    if want is None or isinstance(value, list):
        assert [bytes(v) for v in value] == (want or []), where
    else:
        assert np.asarray(want, dtype=value.dtype).tobytes() == value.tobytes(), where


def test_sequence_examples_equal_tf_train_sequence_example():
    name = "sequence_examples.tfrecord"
    ds = recordwire.Dataset(str(REF / name))
    tf_records = [r.numpy() for r in tf.data.TFRecordDataset(str(REF / name))]
    assert len(tf_records) == len(ds)
    lists_seen = 0
    for i, payload in enumerate(tf_records):
        se = tf.train.SequenceExample.FromString(payload)
        got = ds[i]
        sequence = got.pop("sequence")
        assert sorted(got) == sorted(se.context.feature.keys()), i
        for key, feature in se.context.feature.items():
            check_tf_feature(got[key], feature, (i, key))
        assert sorted(sequence) == sorted(se.feature_lists.feature_list.keys()), i
        for key, flist in se.feature_lists.feature_list.items():
            assert len(sequence[key]) == len(flist.feature), (i, key)
            for t, feature in enumerate(flist.feature):
                check_tf_feature(sequence[key][t], feature, (i, key, t))
            lists_seen += 1
    assert lists_seen > 5


def test_decode_equals_parse_example():
    ds = recordwire.Dataset(str(REF / "small.tfrecord"))
    features = {
        "label": tf.io.FixedLenFeature([], tf.int64),
        "bbox": tf.io.FixedLenFeature([4], tf.float32),
        "image": tf.io.FixedLenFeature([], tf.string),
    }
    ids = [9, 0, 4, 4, 2]
    got = ds.decode(ids, features)  # TensorFlow's own feature objects as the spec
    want = tf.io.parse_example([bytes(ds.raw(i)) for i in ids], features)
    assert got["label"].tolist() == want["label"].numpy().tolist()
    assert got["bbox"].tobytes() == want["bbox"].numpy().tobytes()
    assert got["image"].to_list() == list(want["image"].numpy())
    sparse = ds.decode(ids, {"bbox": tf.io.VarLenFeature(tf.float32)})["bbox"]
    want = tf.io.parse_example([bytes(ds.raw(i)) for i in ids], {"bbox": tf.io.VarLenFeature(tf.float32)})["bbox"]
    assert sparse.indices.tolist() == want.indices.numpy().tolist()
    assert sparse.values.tolist() == want.values.numpy().tolist()
    assert list(sparse.dense_shape) == want.dense_shape.numpy().tolist()


@pytest.mark.parametrize("compression", ["none", "gzip", "zlib"])
def test_tf_data_reads_what_writer_wrote(tmp_path, compression):
    out = tmp_path / "w.tfrecord"
    rows = [{"i": i, "v": np.arange(i, dtype=np.float32), "s": [b"x" * i]} for i in range(20)]
    with recordwire.Writer(out, compression=compression) as w:
        for r in rows:
            w.write(r)
    tf_compression = {"none": "", "gzip": "GZIP", "zlib": "ZLIB"}[compression]
    payloads = [r.numpy() for r in tf.data.TFRecordDataset(str(out), compression_type=tf_compression)]
    assert payloads == [bytes(v) for v in recordwire.Dataset(str(out)).get_many(list(range(len(rows))), raw=True)]
    got = [tf.train.Example.FromString(p) for p in payloads]
    assert len(got) == len(rows)
    for r, ex in zip(rows, got):
        f = ex.features.feature
        assert list(f["i"].int64_list.value) == [r["i"]]
        assert list(f["v"].float_list.value) == r["v"].tolist()
        assert list(f["s"].bytes_list.value) == r["s"]
        # The same message as TensorFlow builds it, entry for entry and byte
        # for byte (protobuf's Python serializer orders map entries its own
        # way; ours keeps the dict's order, so compare sorted).
        built = tf.train.Example(features=tf.train.Features(feature={
            "i": tf.train.Feature(int64_list=tf.train.Int64List(value=[r["i"]])),
            "v": tf.train.Feature(float_list=tf.train.FloatList(value=r["v"].tolist())),
            "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=r["s"])),
        }))
        assert built == ex
        assert built.ByteSize() == len(ex.SerializeToString())
        assert built.SerializeToString(deterministic=True) == ex.SerializeToString(deterministic=True)
