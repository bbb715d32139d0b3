"""recordwire.grain's DataSource under Grain's MapDataset and DataLoader,
and the Arrow batches of decode under Ray Data."""

import numpy as np
import pytest

import recordwire
from recordwire.grain import DataSource

N = 50


@pytest.fixture
def ids_file(tmp_path):
    path = tmp_path / "ids.tfrecord"
    with recordwire.Writer(path) as w:
        for i in range(N):
            w.write({"id": i, "name": f"rec-{i}"})
    return str(path)


def test_grain_map_dataset_reads_every_record(ids_file):
    grain = pytest.importorskip("grain", reason="grain is installed by ./test.sh and .ci/run: it must not be missing there")
    source = DataSource(ids_file)
    assert len(source) == N
    ds = grain.MapDataset.source(source).shuffle(seed=4).map(lambda r: int(r["id"][0]))
    got = [ds[i] for i in range(len(ds))]
    assert sorted(got) == list(range(N))
    assert got != list(range(N))  # shuffled


@pytest.mark.parametrize("workers", [0, 2])
def test_grain_data_loader_reads_every_record(ids_file, workers):
    grain = pytest.importorskip("grain", reason="grain is installed by ./test.sh and .ci/run: it must not be missing there")
    source = DataSource(ids_file)
    sampler = grain.samplers.IndexSampler(num_records=len(source), shuffle=True, seed=1, num_epochs=1,
                                          shard_options=grain.sharding.NoSharding())
    loader = grain.DataLoader(data_source=source, sampler=sampler, worker_count=workers)
    got = [(int(r["id"][0]), r["name"][0]) for r in loader]
    assert sorted(got) == [(i, f"rec-{i}".encode()) for i in range(N)]
    raw = DataSource(ids_file, raw=True)
    assert raw[3] == bytes(recordwire.Dataset(ids_file).raw(3))


def test_ray_data_from_arrow_batches(ids_file):
    ray = pytest.importorskip("ray", reason="ray[data] is installed by ./test.sh and .ci/run: it must not be missing there")
    import ray.data  # noqa: F401

    ds = recordwire.Dataset(ids_file)
    spec = {"id": recordwire.FixedLen((), "int64"), "name": recordwire.FixedLen((), "bytes")}
    batches = [ds.decode(list(range(a, min(a + 16, N))), spec, to="arrow") for a in range(0, N, 16)]
    import pyarrow as pa

    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        rd = ray.data.from_arrow([pa.Table.from_batches([b]) for b in batches])
        assert rd.count() == N
        assert rd.sum("id") == sum(range(N))
        rows = sorted(rd.take_all(), key=lambda r: r["id"])
        assert [r["name"] for r in rows] == [f"rec-{i}".encode() for i in range(N)]
    finally:
        ray.shutdown()


def test_grain_over_a_compressed_shard(ids_file, tmp_path):
    grain = pytest.importorskip("grain", reason="grain is installed by ./test.sh and .ci/run: it must not be missing there")
    gz = tmp_path / "ids.tfrecord.gz"
    with recordwire.Writer(gz, compression="gzip") as w:
        for i in range(N, 2 * N):
            w.write({"id": i, "name": f"rec-{i}"})
    source = DataSource([ids_file, str(gz)])
    assert len(source) == 2 * N
    sampler = grain.samplers.IndexSampler(num_records=len(source), shuffle=True, seed=2, num_epochs=1,
                                          shard_options=grain.sharding.NoSharding())
    loader = grain.DataLoader(data_source=source, sampler=sampler, worker_count=2)
    got = sorted(int(r["id"][0]) for r in loader)
    assert got == list(range(2 * N))
    raw = DataSource(str(gz), raw=True)
    assert raw[3] == bytes(recordwire.Dataset(str(gz)).raw(3))
