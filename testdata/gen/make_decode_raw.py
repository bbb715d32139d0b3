#!/usr/bin/env python3
"""Writes testdata/decode_raw/: payloads of no known message, and what
`protoc --decode_raw` prints for them, the oracle of `recordwire dump`'s
guesses (tests/cli/dump_unknown.rs).

The payloads are encoded here by hand (a dozen lines of wire format, no
protobuf library), framed as TFRecord (CRC32C in pure Python), and each is
given to protoc's `--decode_raw` (the protoc of the grpcio-tools package).
Deterministic: running it again gives the same bytes.

    python3.11 -m venv /tmp/rawenv
    /tmp/rawenv/bin/pip install grpcio-tools==1.85.1
    /tmp/rawenv/bin/python testdata/gen/make_decode_raw.py

Versions used: Python 3.11.7 (x86_64 Linux), grpcio-tools 1.85.1 (libprotoc 35.1).
"""

import os
import struct
import subprocess
import sys

GEN = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(GEN), "decode_raw")
sys.path.insert(0, GEN)

from wire import ld, tag, tf_frame, varint  # noqa: E402


def v(number, value):
    return tag(number, 0) + varint(value)


def f64(number, x):
    return tag(number, 1) + struct.pack("<d", x)


def f64_bits(number, bits):
    return tag(number, 1) + struct.pack("<Q", bits)


def f32(number, x):
    return tag(number, 5) + struct.pack("<f", x)


def f32_bits(number, bits):
    return tag(number, 5) + struct.pack("<I", bits)


def group(number, body):
    return tag(number, 3) + body + tag(number, 4)


def payloads():
    # 0: an Event-like record (as TensorBoard writes them): a double wall
    # time, a step, a summary of tagged float values.
    value = lambda name, x: ld(1, ld(1, name.encode()) + f32(2, x))  # noqa: E731
    yield (f64(1, 1501034942.25) + v(2, 1500)
           + ld(5, value("bleu/dev", 0.112) + value("loss", 2.5) + value("x", 0.0)))
    # 1: the first Event of a file: a text that does not parse as a message.
    yield f64(1, 1501034942.0) + ld(3, b"brain.Event:2")
    # 2: every wire type, and the cases of the guess.
    yield b"".join([
        v(1, 0), v(1, 300), v(1, (1 << 64) - 1),  # -1 as int64: 10 bytes
        f32(2, 0.25), f32(2, -1.5), f32_bits(2, 1), f32_bits(2, 0x7FC00000),
        f64(3, 0.1), f64(3, -2.0), f64_bits(3, 7),
        ld(4, b""),                       # empty: protoc prints ""
        ld(4, b"HiHi"),                   # text that parses as a message: {9: 105 9: 105}
        ld(4, b"caf\xc3\xa9 au lait"),    # UTF-8 text
        ld(4, bytes([1, 2, 3])),          # a packed run: field 0, not a message
        ld(4, bytes(range(0xF0, 0x100))),  # binary: wire type 7
        ld(4, ld(1, b"") + ld(2, v(1, 1)) + f32(3, 1.0)),  # a message holding an empty field
        group(5, v(1, 7) + ld(2, b"in a group") + group(3, v(1, 8))),
        v(536870911, 1),                  # the largest field number
    ])
    # 3: messages 12 deep: protoc opens 10 levels, then shows bytes.
    body = v(1, 42)
    for depth in range(12):
        body = ld(depth % 3 + 1, body + v(15, depth))
    yield body
    # 4: a length-delimited field that looks like a message up to its last
    # byte (a field cut short): bytes, not a message.
    yield ld(1, v(1, 1) + v(2, 2) + tag(3, 2) + b"\x05ab")


def main():
    os.makedirs(OUT, exist_ok=True)
    records = list(payloads())
    with open(os.path.join(OUT, "unknown.tfrecord"), "wb") as f:
        for p in records:
            f.write(tf_frame(p))
    texts = []
    for i, p in enumerate(records):
        r = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "--decode_raw"],
                           input=p, capture_output=True, check=True)
        texts.append(f"# record {i}\n" + r.stdout.decode())
    version = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "--version"],
                             capture_output=True, text=True, check=True).stdout.strip()
    header = ("# `protoc --decode_raw` of each record of unknown.tfrecord, written by\n"
              f"# testdata/gen/make_decode_raw.py with {version} (grpcio-tools).\n")
    with open(os.path.join(OUT, "unknown.protoc.txt"), "w") as f:
        f.write(header + "".join(texts))
    print(version, [len(p) for p in records])


if __name__ == "__main__":
    main()
