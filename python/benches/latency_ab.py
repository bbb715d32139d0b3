"""Per-record latency of the Python package (raw, ds[i], get_many raw, a decode of
256), for A/B runs of two builds on one machine: PYTHONPATH=<other build> python
python/benches/latency_ab.py LABEL (issue 24: benches/results/issue24_python_latency_before_after.txt)."""
import time, statistics, sys, recordwire
ds = recordwire.Dataset("testdata/ref/examples.tfrecord")
n=len(ds)
def lat(f, reps=30000):
    ts=[]
    for k in range(reps):
        t=time.perf_counter_ns(); f(k % n); ts.append(time.perf_counter_ns()-t)
    return statistics.median(ts)
ids = list(range(n))*50
t=time.perf_counter(); ds.get_many(ids, raw=True); gm=(time.perf_counter()-t)/len(ids)*1e9
spec={"features":{"varint_edges":{"form":"var_len","dtype":"int64"},"floats":{"form":"var_len","dtype":"float32"}}}
ts=[]
for _ in range(200):
    t=time.perf_counter(); ds.decode(ids[:256], spec); ts.append(time.perf_counter()-t)
print(sys.argv[1], "raw p50 %.0f ns, getitem p50 %.0f ns, get_many raw %.0f ns/id, decode 256: %.1f us" % (lat(ds.raw), lat(ds.__getitem__), gm, statistics.median(ts)*1e6))
