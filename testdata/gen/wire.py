"""The pieces the fixture generators of testdata/gen share: CRC-32C and
TFRecord's masked CRC and framing (docs/FORMAT.md §1), and protobuf's varints,
tags and length-delimited fields. Python 3 standard library only."""

import struct


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value


def tf_header(length):
    """A TFRecord header declaring `length` (any u64) with its correct length CRC."""
    n = struct.pack("<Q", length)
    return n + struct.pack("<I", masked_crc(n))


def tf_frame(data):
    """One TFRecord frame holding `data`."""
    return tf_header(len(data)) + data + struct.pack("<I", masked_crc(data))


def varint(n):
    """The varint of `n` (negative numbers as their 64-bit two's complement)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(number, wire):
    return varint(number << 3 | wire)


def ld(number, body):
    """A length-delimited field."""
    return tag(number, 2) + varint(len(body)) + body
