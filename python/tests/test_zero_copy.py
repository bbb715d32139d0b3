"""Zero copy: records and bytes values are memoryviews into the file's map,
decoded columns are the decoder's own buffers; views outlive the dataset."""

import gc

import numpy as np
import pytest

import recordwire
from conftest import TESTDATA

SMALL = TESTDATA / "ref" / "small.tfrecord"


def address(view) -> int:
    """Where a buffer's first byte is (numpy reads the buffer protocol)."""
    return np.frombuffer(view, dtype=np.uint8).ctypes.data


def test_raw_points_into_the_map_at_the_record_offset():
    ds = recordwire.Dataset(str(SMALL))
    data = SMALL.read_bytes()
    views = [ds.raw(i) for i in range(len(ds))]
    assert all(isinstance(v, memoryview) and v.readonly for v in views)
    # The file's first record's payload starts 12 bytes in (TFRecord header);
    # each view's address minus the first one's is its offset in the file.
    base = address(views[0]) - 12
    for v in views:
        start = address(v) - base
        assert data[start : start + len(v)] == bytes(v)
    assert len({address(v) for v in views}) == len(views)


def test_bytes_values_point_into_the_record():
    ds = recordwire.Dataset(str(SMALL))
    for i in range(len(ds)):
        raw = ds.raw(i)
        (image,) = ds[i]["image"]
        assert isinstance(image, memoryview) and image.readonly
        offset = address(image) - address(raw)
        assert 0 <= offset and offset + len(image) <= len(raw)
        assert bytes(raw)[offset : offset + len(image)] == bytes(image)


def test_borrowed_decode_points_into_the_map():
    ds = recordwire.Dataset(str(SMALL))
    spec = {"image": recordwire.FixedLen((), "bytes")}
    owned = ds.decode([0, 1], spec)["image"]
    assert isinstance(owned, recordwire.Bytes)
    borrowed = ds.decode(
        [0, 1], '{"features": {"image": {"form": "fixed_len", "dtype": "bytes", "shape": [], "borrow": true}}}'
    )["image"]
    assert [bytes(v) for v in borrowed] == owned.to_list()
    for i, v in enumerate(borrowed):
        assert address(v) == address(ds[i]["image"][0])


def test_views_outlive_the_dataset():
    ds = recordwire.Dataset(str(SMALL))
    want = [bytes(ds.raw(i)) for i in range(len(ds))]
    labels = [int(ds[i]["label"][0]) for i in range(len(ds))]
    views = [ds.raw(i) for i in range(len(ds))]
    images = [ds[i]["image"][0] for i in range(len(ds))]
    columns = ds.decode(list(range(len(ds))), {"label": recordwire.FixedLen((), "int64")})
    del ds
    gc.collect()
    # The map is kept by the views: reading them is still valid.
    assert [bytes(v) for v in views] == want
    assert all(len(bytes(i)) == 64 for i in images)
    assert columns["label"].tolist() == labels
    assert columns["label"].dtype == np.int64


def test_decoded_arrays_are_aligned_and_own_their_memory():
    ds = recordwire.Dataset(str(SMALL))
    got = ds.decode(list(range(len(ds))), {"bbox": recordwire.FixedLen(4, "float32")})
    bbox = got["bbox"]
    assert bbox.shape == (len(ds), 4)
    assert bbox.ctypes.data % 64 == 0  # the decoder's 64-byte aligned buffer
    assert bbox.flags.c_contiguous
    # Decoding again gives new memory: a batch handed out is never reused.
    again = ds.decode(list(range(len(ds))), {"bbox": recordwire.FixedLen(4, "float32")})["bbox"]
    assert not np.shares_memory(bbox, again)
    assert np.array_equal(bbox, again)


def test_gzip_file_reads_through_views_too():
    plain = recordwire.Dataset(str(TESTDATA / "ref" / "examples.tfrecord"))
    gz = recordwire.Dataset(str(TESTDATA / "ref" / "examples.tfrecord.gz"))
    assert len(gz) == len(plain)
    for i in range(len(plain)):
        assert bytes(gz.raw(i)) == bytes(plain.raw(i))
