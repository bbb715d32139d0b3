"""GZIP/ZLIB files read by id through their checkpoint indexes (Dataset):
TensorFlow's own compressed files, Python's gzip at several levels and in
several members, and the block-compressed output of Writer(gzip_blocks=...),
which TensorFlow reads record for record."""

import gzip
import pickle
import zlib

import numpy as np
import pytest

import recordwire
from conftest import TESTDATA, real_files, realworld_dir, same_dict

tf = pytest.importorskip("tensorflow", reason="tensorflow-cpu is installed by ./test.sh and .ci/run: it must not be missing there")

REF = TESTDATA / "ref"
PLAIN = REF / "examples.tfrecord"


@pytest.mark.parametrize("name", ["examples.tfrecord.gz", "examples.tfrecord.zlib"])
def test_tensorflow_compressed_files_by_id(tmp_path, name):
    path = tmp_path / name
    path.write_bytes((REF / name).read_bytes())
    plain = recordwire.Dataset(str(PLAIN))
    ds = recordwire.Dataset(str(path))
    assert len(ds) == len(plain) == 40
    assert ds.payload == "example"
    for i in range(len(ds)):
        assert ds.raw(i) == bytes(plain.raw(i))
        same_dict(ds[i], plain[i])
    ids = [39, 0, 17, 17, -1, 3]
    assert ds.get_many(ids, raw=True) == [bytes(v) for v in plain.get_many(ids, raw=True)]
    for a, b in zip(ds.get_many(ids), plain.get_many(ids)):
        same_dict(a, b)
    with pytest.raises(IndexError):
        ds.raw(40)
    # Orders over the same record offsets are the same ids.
    for mode in ["shuffle", "page-aware"]:
        np.testing.assert_array_equal(ds.order(mode=mode, seed=3), plain.order(mode=mode, seed=3))
    # Page size 0: checkpoint spans as pages, a permutation of the ids.
    spans = ds.order(mode="page-aware", page_size=0, seed=3)
    assert sorted(spans.tolist()) == list(range(40))
    with pytest.raises(ValueError):
        plain.order(mode="page-aware", page_size=0)
    # Written checkpoint sidecars, at several spacings, read the same.
    for spacing in [1, 4096, 1 << 30]:
        assert ds.write_index(spacing=spacing) == [path.with_name(name + ".rwindex")]
        again = recordwire.Dataset(str(path))
        assert [again.raw(i) for i in range(40)] == [ds.raw(i) for i in range(40)]
    # The old name still writes them, with a warning.
    with pytest.warns(DeprecationWarning, match="write_index"):
        assert ds.index(spacing=4096) == [path.with_name(name + ".rwindex")]
    # Pickles as its arguments.
    clone = pickle.loads(pickle.dumps(ds))
    assert clone.raw(7) == ds.raw(7)


def test_decode_equals_the_plain_dataset(tmp_path):
    path = tmp_path / "e.tfrecord.gz"
    path.write_bytes((REF / "examples.tfrecord.gz").read_bytes())
    # The spec `recordwire inspect --spec` infers for this file, in part.
    spec = {"features": {
        "varint_edges": {"form": "var_len", "dtype": "int64"},
        "floats": {"form": "var_len", "dtype": "float32"},
        "all_bytes": {"form": "var_len", "dtype": "bytes"},
    }}
    ids = [5, 0, 39, 12, 12]
    plain = recordwire.Dataset(str(PLAIN)).decode(ids, spec)
    got = recordwire.Dataset(str(path)).decode(ids, spec)
    for name in ["varint_edges", "floats"]:
        np.testing.assert_array_equal(got[name].values, plain[name].values)
        np.testing.assert_array_equal(got[name].row_splits, plain[name].row_splits)
    assert got["all_bytes"].values.to_list() == plain["all_bytes"].values.to_list()


@pytest.mark.parametrize("name", ["examples.tfrecord", "examples.tfrecord.gz"])
def test_bytes_values_are_views_of_owned_buffers_that_outlive_the_dataset(tmp_path, name):
    # Values are slices of the buffer their record was read from (the file's
    # map, or the record's inflated span): never copies (a copy would be a
    # view of a `bytes` object), and they keep that buffer alive.
    import gc

    path = tmp_path / name
    path.write_bytes((REF / name).read_bytes())
    spec = {"features": {"all_bytes": {"form": "var_len", "dtype": "bytes", "borrow": True}}}
    ids = [5, 0, 39, 12, 12]
    ds = recordwire.Dataset(str(path))
    col = ds.decode(ids, spec)["all_bytes"]
    record = ds[5]["all_bytes"]
    raw = ds.raw(39)
    expected_col = [bytes(v) for v in recordwire.Dataset(str(PLAIN)).decode(ids, spec)["all_bytes"].values]
    expected_record = [bytes(v) for v in recordwire.Dataset(str(PLAIN))[5]["all_bytes"]]
    expected_raw = bytes(recordwire.Dataset(str(PLAIN)).raw(39))
    views = [v for v in list(col.values) + record if len(v)]
    assert views, "the file has bytes values"
    for v in views + [raw]:
        assert isinstance(v, memoryview) and v.readonly
        assert isinstance(v.obj, np.ndarray), f"a copy: a view of {type(v.obj)}"
    del ds
    gc.collect()
    assert [bytes(v) for v in col.values] == expected_col
    assert [bytes(v) for v in record] == expected_record
    assert bytes(raw) == expected_raw


@pytest.mark.parametrize("level", [1, 6, 9])
@pytest.mark.parametrize("members", [1, 3])
def test_python_gzip_levels_and_members(tmp_path, level, members):
    data = PLAIN.read_bytes()
    cuts = [len(data) * k // members + 7 * (k > 0) for k in range(members)] + [len(data)]
    blob = b"".join(gzip.compress(data[a:b], compresslevel=level) for a, b in zip(cuts, cuts[1:]))
    path = tmp_path / f"p{level}_{members}.tfrecord.gz"
    path.write_bytes(blob)
    plain = recordwire.Dataset(str(PLAIN))
    ds = recordwire.Dataset(str(path))
    assert [ds.raw(i) for i in range(40)] == [bytes(plain.raw(i)) for i in range(40)]
    # Cut inside records: not block-compressed.
    assert ds.block_compressed == [False]
    zpath = tmp_path / f"z{level}.tfrecord.zlib"
    zpath.write_bytes(zlib.compress(data, level))
    zds = recordwire.Dataset(str(zpath))
    assert [zds.raw(i) for i in range(40)] == [ds.raw(i) for i in range(40)]


def test_tensorflow_reads_block_compressed_output(tmp_path):
    out = tmp_path / "blocks.tfrecord.gz"
    rows = [{"i": i, "v": np.arange(i % 50, dtype=np.float32), "s": [b"y" * (i % 300)]} for i in range(3000)]
    with recordwire.Writer(out, gzip_blocks=16384) as w:
        for r in rows:
            w.write(r)
    tf_payloads = [r.numpy() for r in tf.data.TFRecordDataset(str(out), compression_type="GZIP")]
    assert len(tf_payloads) == len(rows)
    ds = recordwire.Dataset(str(out))
    assert ds.block_compressed == [True]
    assert len(ds) == len(rows)
    # The same ids give the same records, in any order.
    ids = list(range(len(rows)))[::-7] + [0, 2999, 1500]
    assert ds.get_many(ids, raw=True) == [tf_payloads[i] for i in ids]
    assert [ds.raw(i) for i in range(0, 3000, 97)] == tf_payloads[::97]
    for i in [0, 1234, 2999]:
        ex = tf.train.Example.FromString(tf_payloads[i])
        assert list(ex.features.feature["i"].int64_list.value) == [i]
        np.testing.assert_array_equal(ds[i]["i"], [i])
    # Python's gzip reads it whole too (several members, one stream): the
    # same bytes as the records written uncompressed.
    plain = tmp_path / "plain.tfrecord"
    with recordwire.Writer(plain) as w:
        for r in rows:
            w.write(r)
    assert gzip.decompress(out.read_bytes()) == plain.read_bytes()


def test_gz_dataset_is_a_deprecated_dataset(tmp_path):
    path = tmp_path / "e.tfrecord.gz"
    path.write_bytes((REF / "examples.tfrecord.gz").read_bytes())
    with pytest.warns(DeprecationWarning, match="Dataset reads compressed files itself"):
        ds = recordwire.GzDataset(str(path), payload="example")
    assert isinstance(ds, recordwire.Dataset)
    assert ds.payload == "example" and len(ds) == 40
    with pytest.warns(DeprecationWarning, match="write_index"):
        assert ds.index(4096) == [path.with_name("e.tfrecord.gz.rwindex")]
    clone = pickle.loads(pickle.dumps(ds))
    assert type(clone) is recordwire.Dataset and bytes(clone.raw(3)) == bytes(ds.raw(3))


def test_one_dataset_over_plain_gzip_zlib_and_block_compressed_shards(tmp_path):
    data = PLAIN.read_bytes()
    (tmp_path / "a.tfrecord").write_bytes(data)
    (tmp_path / "b.tfrecord.gz").write_bytes(gzip.compress(data, compresslevel=6))
    (tmp_path / "c.tfrecord.zz").write_bytes(zlib.compress(data, 9))
    rows = [{"i": i, "s": [b"x" * (i % 40)]} for i in range(500)]
    with recordwire.Writer(tmp_path / "d.tfrecord.gz", gzip_blocks=2048) as w:
        for r in rows:
            w.write(r)
    with recordwire.Writer(tmp_path / "d.tfrecord") as w:
        for r in rows:
            w.write(r)
    mixed = recordwire.Dataset([str(tmp_path / n) for n in ["a.tfrecord", "b.tfrecord.gz", "c.tfrecord.zz", "d.tfrecord.gz"]])
    plain = recordwire.Dataset([str(tmp_path / n) for n in ["a.tfrecord", "a.tfrecord", "a.tfrecord", "d.tfrecord"]])
    assert mixed.compression == ["none", "gzip", "zlib", "gzip"]
    assert mixed.block_compressed == [False, False, False, True]
    assert len(mixed) == len(plain) == 120 + 500
    # Every id, as the streamed records (the plain files).
    for i in range(len(mixed)):
        assert bytes(mixed.raw(i)) == bytes(plain.raw(i)), i
        assert isinstance(mixed.raw(i), memoryview)
    ids = np.random.default_rng(3).permutation(len(mixed))[:200]
    assert [bytes(v) for v in mixed.get_many(ids, raw=True)] == [bytes(v) for v in plain.get_many(ids, raw=True)]
    # Orders are those of the plain dataset.
    for mode in ["shuffle", "page-aware", "quasi-random"]:
        np.testing.assert_array_equal(mixed.order(mode=mode, seed=5), plain.order(mode=mode, seed=5))
    spans = mixed.order(mode="page-aware", page_size=0, seed=1)
    assert sorted(spans.tolist()) == list(range(len(mixed)))
    # A view outlives the dataset.
    kept = mixed.raw(130)
    want = bytes(plain.raw(130))
    del mixed
    assert bytes(kept) == want


def test_records_of_each_file_read_as_its_own_payload(tmp_path):
    """An OFRecord file and a tf.Example file (and a SequenceExample file)
    in one dataset: each record as `recordwire cat` gives it."""
    import json
    import subprocess
    files = [REF / "ofrecord.part-0", PLAIN, REF / "sequence_examples.tfrecord"]
    ds = recordwire.Dataset([str(f) for f in files])
    assert ds.payloads == ["ofrecord", "example", "sequence_example"]
    one = [recordwire.Dataset(str(f)) for f in files]
    at = 0
    for d in one:
        for i in range(len(d)):
            assert bytes(ds.raw(at + i)) == bytes(d.raw(i))
            a, b = ds[at + i], d[i]
            assert a.keys() == b.keys()
        at += len(d)
    # decode needs one payload.
    with pytest.raises(ValueError, match="one spec reads one payload"):
        ds.decode([0], {"features": {}})


def test_the_real_files_globbed_as_one_dataset():
    """The real files (TFX, Lingvo, Waymo, OneFlow, ...: plain and GZIP,
    OFRecord and TFRecord) globbed into one dataset: each record as the file
    alone gives it, read as its own payload."""
    if real_files() is None:
        return
    folder = realworld_dir()
    ds = recordwire.Dataset(str(folder / "*"))
    assert len(ds.files) >= 20
    assert "gzip" in ds.compression and "ofrecord" in ds.payloads and "example" in ds.payloads
    at = 0
    for k, f in enumerate(ds.files):
        one = recordwire.Dataset(f)
        assert ds.payloads[k] == one.payload, f
        for i in range(len(one)):
            assert bytes(ds.raw(at + i)) == bytes(one.raw(i)), (f, i)
        at += len(one)
    assert at == len(ds)
