#!/usr/bin/env python3
"""The Python peers of the `schema` bench (benches/schema.rs): protobuf's
Python package (upb) on the real Waymo `Scenario` record (953 KB), with
message classes built at run time from Waymo's `.proto`
(testdata/schema/waymo, compiled by grpc_tools.protoc), beside recordwire's
Python package on the same record.

Prints the median of N timed runs of each (after one warm-up), in ms, and the
ratios the issue asks for:

- upb `FromString` (parse), `MessageToJson` of the parsed message, and parse
  then project one nested column (`tracks.states.center_x`, a list per
  track) — the three ways upb gives what recordwire gives;
- recordwire `Schema.json` (the whole record as JSON), `Schema.to_dict`
  (every value as Python values), and the column through
  `Dataset.decode(ids, paths, to="arrow")` when the package has it.

Run: `python3 benches/schema_upb.py [--runs N]` with protobuf, grpcio-tools
and recordwire importable.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

ROOT = Path(__file__).resolve().parents[1]
WAYMO = ROOT / "testdata" / "schema" / "waymo"
REAL = Path(os.environ.get("RECORDWIRE_REALWORLD", ROOT.parent / "shared" / "realworld" / "files"))
SCENARIO = REAL / (
    "waymo-research_waymo-open-dataset__src__waymo_open_dataset__utils__testdata__"
    "motion_data_one_scenario.tfrecord"
)


def median_ms(f: Callable[[], Any], runs: int) -> float:
    f()
    times: List[float] = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()

    import google.protobuf
    from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

    import recordwire

    with tempfile.TemporaryDirectory() as tmp:
        pb = Path(tmp) / "waymo.pb"
        subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"-I{WAYMO}", "--include_imports",
             f"--descriptor_set_out={pb}", "waymo_open_dataset/protos/scenario.proto"],
            check=True,
        )
        set_bytes = pb.read_bytes()
    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(set_bytes).file:
        pool.Add(f)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("waymo.open_dataset.Scenario"))
    schema = recordwire.Schema.from_descriptor_set(set_bytes, "waymo.open_dataset.Scenario")
    ds = recordwire.Dataset(SCENARIO, message=schema)
    data = bytes(ds.raw(0))

    def project() -> List[List[float]]:
        msg = cls.FromString(data)
        return [[s.center_x for s in t.states] for t in msg.tracks]

    results: Dict[str, float] = {
        "upb FromString": median_ms(lambda: cls.FromString(data), args.runs),
        "upb MessageToJson": median_ms(
            lambda: json_format.MessageToJson(cls.FromString(data), preserving_proto_field_name=True, indent=None),
            max(3, args.runs // 5),
        ),
        "upb parse+project center_x": median_ms(project, args.runs),
        "recordwire Schema.json": median_ms(lambda: schema.json(data), args.runs),
        "recordwire ds.json(0)": median_ms(lambda: ds.json(0), args.runs),
        "recordwire ds[0]": median_ms(lambda: ds[0], args.runs),
    }
    if hasattr(ds, "decode"):
        try:
            ds.decode([0], ["tracks.states.center_x"], to="arrow")
            results["recordwire decode center_x to arrow"] = median_ms(
                lambda: ds.decode([0], ["tracks.states.center_x"], to="arrow"), args.runs
            )
        except Exception as e:  # the column path is the newest part
            print(f"(decode by path not available: {e})")
    print(f"# {len(data)} bytes, protobuf {google.protobuf.__version__}, recordwire {recordwire.__version__}, "
          f"median of {args.runs} runs")
    for name, ms in results.items():
        print(f"{name:40s} {ms:10.3f} ms")
    json_ratio = results["upb MessageToJson"] / results["recordwire ds.json(0)"]
    print(f"JSON of the whole record: recordwire {json_ratio:.0f}x MessageToJson")
    col = results.get("recordwire decode center_x to arrow")
    if col:
        print(f"one nested column: recordwire {results['upb parse+project center_x'] / col:.0f}x upb parse+project")


if __name__ == "__main__":
    main()
