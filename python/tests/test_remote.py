"""Remote shards: every test file and real file, uploaded to a real S3
server (moto's, on 127.0.0.1) or served by an HTTP server that honours
``Range``, reads through ``Dataset`` (``ds[i]``, ``raw``, ``get_many``,
``decode``) and the torch and Grain adapters exactly as the local file;
errors name the URL."""

import os
import pickle
import random
from pathlib import Path

import numpy as np
import pytest

import recordwire
from conftest import TESTDATA, real_files


def norm(value):
    """A record of ``ds[i]`` as plain values (arrays as lists, views as
    bytes), at any depth: SequenceExample records nest."""
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, (list, tuple)):
        return [norm(v) for v in value]
    if isinstance(value, dict):
        return {k: norm(v) for k, v in value.items()}
    return value

def files():
    ref = sorted(
        p for p in (TESTDATA / "ref").iterdir() if not p.name.endswith((".jsonl", ".json", ".rwindex"))
    )
    real = real_files() or []
    return ref + real


def outcome(ds, i):
    """``ds[i]`` as plain values, or the error it raises (a file that is not
    of its detected payload fails alike locally and remotely)."""
    try:
        return norm(ds[i])
    except recordwire.Error as e:
        return (e.kind, e.record, e.offset)


@pytest.fixture(scope="module")
def bucket(s3, tmp_path_factory):
    """Every file uploaded to bucket ``remote``; the storage options."""
    s3.bucket("remote")
    for f in files():
        s3.put("remote", f.name, f.read_bytes())
    return s3.options(str(tmp_path_factory.mktemp("cache")))


@pytest.mark.parametrize("path", files(), ids=lambda p: p.name[-48:])
def test_dataset_over_s3_reads_as_the_local_file(bucket, path):
    local = recordwire.Dataset(str(path))
    remote = recordwire.Dataset(f"s3://remote/{path.name}", storage_options=bucket)
    assert len(remote) == len(local)
    assert remote.files == [f"s3://remote/{path.name}"]
    assert remote.compression == local.compression
    assert remote.payloads == local.payloads
    n = len(local)
    ids = sorted({random.Random(n).randrange(n) for _ in range(20)} | {n - 1}) if n else []
    for i in ids:
        assert bytes(remote.raw(i)) == bytes(local.raw(i))
        assert outcome(remote, i) == outcome(local, i)
    assert [bytes(r) for r in remote.get_many(ids, raw=True)] == [bytes(r) for r in local.get_many(ids, raw=True)]
    if n and local.payload == "example":

        def decoded(ds):
            try:
                columns = ds.decode(ids, "auto")
            except recordwire.Error as e:
                return (e.kind, e.record, e.offset)
            return {k: (v.dtype.str, v.shape, v.tobytes()) for k, v in columns.items() if isinstance(v, np.ndarray)}

        assert decoded(remote) == decoded(local)


def test_a_glob_over_a_listing_and_pickling_as_the_listed_objects(s3, bucket):
    s3.bucket("globbed")
    for i in range(3):
        s3.put("globbed", f"train-{i}.tfrecord", (TESTDATA / "ref" / "examples.tfrecord").read_bytes())
    s3.put("globbed", "other.tfrecord", b"")
    ds = recordwire.Dataset("s3://globbed/train-*.tfrecord", storage_options=bucket)
    assert ds.files == [f"s3://globbed/train-{i}.tfrecord" for i in range(3)]
    assert len(ds) == 3 * len(recordwire.Dataset(str(TESTDATA / "ref" / "examples.tfrecord")))
    again = pickle.loads(pickle.dumps(ds))
    assert again._paths == ds.files
    assert len(again) == len(ds)


def test_http_server_with_ranges(range_server, tmp_path):
    data = (TESTDATA / "ref" / "examples.tfrecord").read_bytes()
    range_server.objects["/d/examples.tfrecord"] = data
    url = f"{range_server.base}/d/examples.tfrecord"
    ds = recordwire.Dataset(url, storage_options={"allow_http": "true", "cache_dir": str(tmp_path)})
    local = recordwire.Dataset(str(TESTDATA / "ref" / "examples.tfrecord"))
    assert [bytes(ds.raw(i)) for i in range(len(ds))] == [bytes(local.raw(i)) for i in range(len(local))]


def test_torch_workers_read_every_record_of_remote_shards(s3, bucket):
    torch = pytest.importorskip("torch", reason="torch is installed by ./test.sh and .ci/run: it must not be missing there")
    import recordwire.torch as rwt
    from torch.utils.data import DataLoader

    s3.bucket("torchy")
    with recordwire.Writer(Path(bucket["cache_dir"]) / "ids.tfrecord") as w:
        for i in range(100):
            w.write({"id": i})
    s3.put("torchy", "ids.tfrecord", (Path(bucket["cache_dir"]) / "ids.tfrecord").read_bytes())
    spec = {"id": recordwire.FixedLen((), "int64")}
    data = rwt.IterableDataset("s3://torchy/ids.tfrecord", spec=spec, batch_size=8, seed=1, storage_options=bucket)
    got = []
    for batch in DataLoader(data, batch_size=None, num_workers=2, multiprocessing_context="fork"):
        assert isinstance(batch["id"], torch.Tensor)
        got.extend(batch["id"].tolist())
    assert sorted(got) == list(range(100))


def test_grain_source_over_s3(bucket):
    pytest.importorskip("grain", reason="grain is installed by ./test.sh and .ci/run: it must not be missing there")
    from recordwire.grain import DataSource

    source = DataSource("s3://remote/examples.tfrecord", storage_options=bucket)
    local = DataSource(str(TESTDATA / "ref" / "examples.tfrecord"))
    assert len(source) == len(local)
    for i in range(len(local)):
        assert norm(source[i]) == norm(local[i])


def test_a_missing_object_is_not_found_with_its_url(bucket):
    with pytest.raises(recordwire.NotFoundError) as e:
        recordwire.Dataset("s3://remote/no-such.tfrecord", storage_options=bucket)
    assert e.value.kind == "io_error"
    assert e.value.file == "s3://remote/no-such.tfrecord"
    assert "not found" in str(e.value)
    assert "testing" not in str(e.value)  # never a credential


def test_an_unknown_storage_option_is_named(bucket):
    with pytest.raises(recordwire.IoError, match="nonsense_key"):
        recordwire.Dataset("s3://remote/examples.tfrecord", storage_options={**bucket, "nonsense_key": "1"})


def test_an_unreachable_endpoint_fails_promptly(bucket):
    options = {**bucket, "aws_endpoint": f"http://127.0.0.1:{_closed_port()}", "max_retries": "1", "retry_timeout": "2s"}
    with pytest.raises(recordwire.IoError) as e:
        recordwire.Dataset("s3://remote/examples.tfrecord", storage_options=options)
    assert e.value.file == "s3://remote/examples.tfrecord"


def _closed_port():
    from remote_servers import free_port

    return free_port()


def test_write_index_puts_the_sidecar_beside_the_object(s3, bucket):
    s3.bucket("indexed")
    s3.put("indexed", "examples.tfrecord", (TESTDATA / "ref" / "examples.tfrecord").read_bytes())
    url = "s3://indexed/examples.tfrecord"
    ds = recordwire.Dataset(url, storage_options=bucket)
    with pytest.raises(recordwire.NotFoundError):
        recordwire.Dataset(url, index=url + ".rwindex", storage_options=bucket)
    # Its URL comes back as a string (a pathlib.Path would make it s3:/...).
    assert ds.write_index() == [url + ".rwindex"]
    # The sidecar is an object now: named as the index, it opens the data.
    again = recordwire.Dataset(url, index=url + ".rwindex", storage_options={**bucket, "cache_dir": "none"})
    assert [bytes(again.raw(i)) for i in range(len(again))] == [bytes(ds.raw(i)) for i in range(len(ds))]


def test_prefetch_then_read_with_a_span_cache(bucket):
    options = {**bucket, "span_size": "4096", "span_cache": str(1 << 20)}
    ds = recordwire.Dataset("s3://remote/examples.tfrecord", storage_options=options)
    local = recordwire.Dataset(str(TESTDATA / "ref" / "examples.tfrecord"))
    ids = ds.order(mode="quasi-random", page_size=4096, window=2, seed=3)
    assert ds.prefetch(ids[:16]) is None
    assert [bytes(r) for r in ds.get_many(ids, raw=True)] == [bytes(r) for r in local.get_many(ids, raw=True)]


def test_a_bucket_root_is_a_usage_error_for_reading_and_writing(s3, bucket):
    s3.bucket("rooted")
    for url in ["s3://rooted/", "s3://rooted"]:
        with pytest.raises(recordwire.Error) as e:
            recordwire.Dataset(url, storage_options=bucket)
        assert e.value.kind == "usage_error"
        assert "names a bucket, not an object: use s3://rooted/*" in str(e.value)
    pa = pytest.importorskip("pyarrow", reason="pyarrow is installed by ./test.sh and .ci/run")
    with pytest.raises(recordwire.Error) as e:
        recordwire.write_arrow(pa.table({"x": [1, 2]}), "s3://rooted/", storage_options=bucket)
    assert e.value.kind == "usage_error"


def test_a_glob_that_matches_nothing_is_a_usage_error(bucket, tmp_path):
    for pattern in ["s3://remote/no-such-*.tfrecord", str(tmp_path / "none-*"), tmp_path.as_uri() + "/none-*"]:
        with pytest.raises(recordwire.Error) as e:
            recordwire.Dataset(pattern, storage_options=bucket)
        assert e.value.kind == "usage_error", pattern
        assert not isinstance(e.value, ValueError)


def test_an_unsupported_scheme_says_so(bucket):
    with pytest.raises(recordwire.Error) as e:
        recordwire.Dataset("ftp://example.com/x.tfrecord")
    assert e.value.kind == "usage_error"
    assert "unsupported scheme ftp://" in str(e.value)


def test_file_urls_open_as_their_paths_globs_too(tmp_path):
    data = (TESTDATA / "ref" / "examples.tfrecord").read_bytes()
    for i in range(2):
        (tmp_path / f"part-{i}.tfrecord").write_bytes(data)
    (tmp_path / "part-0.tfrecord.idx").write_text("0 10\n")
    base = tmp_path.as_uri()
    ds = recordwire.Dataset(base + "/part-*")
    # The glob matches the record files (not the .idx), opened as their paths.
    assert ds.files == [str(tmp_path / f"part-{i}.tfrecord") for i in range(2)]
    # The folder's own URL means its record files, as the folder's path does.
    for folder in (base, base + "/"):
        assert recordwire.Dataset(folder).files == ds.files
    assert len(ds) == 2 * len(recordwire.Dataset(str(tmp_path / "part-0.tfrecord")))


def test_an_object_with_its_sidecar_opens_with_any_coalesce_gap(s3, bucket, tmp_path):
    # Issue 37, point 1: opening an object of 100,000 small records beside
    # its .rwindex raised PanicError (the sidecar's scattered sample reads,
    # joined as if sorted), with the default gap and any gap below 64 KiB.
    path = tmp_path / "small.tfrecord"
    with recordwire.Writer(str(path)) as w:
        for i in range(100_000):
            w.write({"id": i})
    recordwire.Dataset(str(path)).write_index()
    s3.bucket("sidecars")
    s3.put("sidecars", "small.tfrecord", path.read_bytes())
    s3.put("sidecars", "small.tfrecord.rwindex", (tmp_path / "small.tfrecord.rwindex").read_bytes())
    for gap in ("0", "4096", "65535", "1048576"):
        options = {**bucket, "coalesce_gap": gap, "cache_dir": str(tmp_path / f"cache-{gap}")}
        ds = recordwire.Dataset("s3://sidecars/small.tfrecord", storage_options=options)
        assert len(ds) == 100_000, gap
        assert [int(ds[i]["id"][0]) for i in (0, 54_321, 99_999)] == [0, 54_321, 99_999]


def test_a_remote_glob_passes_over_index_files(s3, bucket):
    s3.bucket("with-indexes")
    data = (TESTDATA / "ref" / "examples.tfrecord").read_bytes()
    s3.put("with-indexes", "real/wmt", data)
    s3.put("with-indexes", "real/wmt.idx", b"0 10\n10 12\n")
    ds = recordwire.Dataset("s3://with-indexes/real/*", storage_options=bucket)
    assert ds.files == ["s3://with-indexes/real/wmt"]


def _epoch_bytes(server, url, options, **loader_args):
    """One epoch of a Loader over ``url``: the labels it gave and the body
    bytes the server sent for it (opening not counted)."""
    loader = recordwire.Loader(url, {"label": recordwire.FixedLen((), "int64")}, batch_size=64,
                               storage_options=options, **loader_args)
    server.reset()
    labels = np.concatenate([b["label"] for b in loader])
    return np.sort(labels), server.bytes_sent, loader


def test_an_epoch_over_a_remote_object_fetches_its_bytes_about_once(range_server, tmp_path):
    # Issue 37, point 3: a default Loader over a remote object fetched it
    # about once per batch (each batch's records joined across 1 MiB gaps).
    rng = np.random.default_rng(5)
    path = tmp_path / "epoch.tfrecord"
    n = 3000
    with recordwire.Writer(str(path)) as w:
        for i in range(n):
            w.write({"label": np.array([i], np.int64), "blob": [rng.bytes(int(rng.integers(300, 2300)))]})
    data = path.read_bytes()
    range_server.objects["/epoch/data.tfrecord"] = data
    url = f"{range_server.base}/epoch/data.tfrecord"
    # A first byte later than the default read_timeout (5 s: a loaded
    # machine, a server in Python) would end the try and fetch the range
    # again, bytes that this count is not about.
    options = {"allow_http": "true", "cache_dir": str(tmp_path / "cache"), "span_size": str(256 << 10),
               "read_timeout": "600s"}
    labels, sent, loader = _epoch_bytes(range_server, url, options)
    assert labels.tolist() == list(range(n))
    assert loader._order["mode"] == "quasi-random" and loader._order["page_size"] == 256 << 10
    assert sent <= 1.1 * len(data), f"the default order fetched {sent} bytes of a {len(data)}-byte object"
    with pytest.warns(UserWarning, match="full shuffle of remote objects"):
        labels, sent, _ = _epoch_bytes(range_server, url, options, order="shuffle")
    assert labels.tolist() == list(range(n))
    assert sent <= 1.1 * len(data), f"a full shuffle fetched {sent} bytes of a {len(data)}-byte object"
    # Local data keeps the full shuffle, without a word.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        local = recordwire.Loader(str(path), {"label": recordwire.FixedLen((), "int64")}, batch_size=64)
    assert local._order["mode"] == "shuffle" and local._order["page_size"] == 4096
