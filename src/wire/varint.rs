//! Base-128 varints.
//!
//! Decoding follows Google's parsers: at most 10 bytes; in the 10th byte only
//! the continuation bit matters (bits past the 64th are dropped); overlong
//! (non-minimal) encodings are accepted.

use crate::error::DecodeReason;

/// Decodes one varint from the start of `buf`: `(value, bytes used)`.
///
/// Errors: [`DecodeReason::Truncated`] when `buf` ends before the last byte,
/// [`DecodeReason::VarintTooLong`] when 10 bytes all have the continuation bit.
///
/// ```
/// use recordwire::wire::decode_varint;
/// assert_eq!(decode_varint(&[0xac, 0x02]), Ok((300, 2)));
/// assert_eq!(decode_varint(&[0x80, 0x00]), Ok((0, 2))); // overlong is fine
/// ```
#[inline(always)]
pub fn decode_varint(buf: &[u8]) -> Result<(u64, usize), DecodeReason> {
    match buf.first() {
        Some(&b) if b < 0x80 => Ok((b as u64, 1)),
        _ => decode_varint_slow(buf),
    }
}

#[inline]
fn decode_varint_slow(buf: &[u8]) -> Result<(u64, usize), DecodeReason> {
    if let Some(b) = buf.get(..10) {
        // At least 10 bytes: no bounds checks per byte.
        let mut value: u64 = 0;
        for (i, &byte) in b.iter().enumerate() {
            // For i == 9, `<< 63` keeps only the lowest bit: bits past the 64th are dropped.
            value |= ((byte & 0x7f) as u64) << (7 * i);
            if byte < 0x80 {
                return Ok((value, i + 1));
            }
        }
        return Err(DecodeReason::VarintTooLong);
    }
    let mut value: u64 = 0;
    for (i, &b) in buf.iter().enumerate() {
        value |= ((b & 0x7f) as u64) << (7 * i);
        if b < 0x80 {
            return Ok((value, i + 1));
        }
    }
    Err(DecodeReason::Truncated)
}

/// Decodes a packed run of varints, calling `each` with every value; returns
/// how many there were. Errors carry offsets relative to the run's start.
#[inline]
pub(crate) fn for_each_packed_varint(
    bytes: &[u8],
    mut each: impl FnMut(u64),
) -> Result<usize, (usize, DecodeReason)> {
    let mut i = 0;
    let mut n = 0;
    while let Some(&b) = bytes.get(i) {
        if b < 0x80 {
            each(b as u64);
            i += 1;
        } else {
            let (v, len) = decode_varint_slow(&bytes[i..]).map_err(|r| (i, r))?;
            each(v);
            i += len;
        }
        n += 1;
    }
    Ok(n)
}

/// Appends the minimal encoding of `value` to `out`.
///
/// ```
/// let mut v = Vec::new();
/// recordwire::wire::encode_varint(300, &mut v);
/// assert_eq!(v, [0xac, 0x02]);
/// ```
#[inline]
pub fn encode_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Writes the minimal encoding of `value` into any [`bytes::BufMut`].
#[inline]
pub fn put_varint<B: bytes::BufMut>(mut value: u64, out: &mut B) {
    while value >= 0x80 {
        out.put_u8((value as u8) | 0x80);
        value >>= 7;
    }
    out.put_u8(value as u8);
}

/// Length of the minimal encoding of `value`, 1 ..= 10.
#[inline]
pub fn encoded_len_varint(value: u64) -> usize {
    // ceil(bits / 7) with at least one byte, branch-free (the formula prost
    // uses): bits = 64 - lz(value | 1); (bits * 9 + 64) / 64 == ceil(bits / 7)
    // for 1 <= bits <= 64.
    ((((value | 1).leading_zeros() ^ 63) * 9 + 73) / 64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The obvious byte-at-a-time decoder, as the reference.
    fn naive(buf: &[u8]) -> Result<(u64, usize), DecodeReason> {
        let mut v: u128 = 0;
        for i in 0..10 {
            let Some(&b) = buf.get(i) else {
                return Err(DecodeReason::Truncated);
            };
            v |= ((b & 0x7f) as u128) << (7 * i);
            if b & 0x80 == 0 {
                return Ok((v as u64, i + 1));
            }
        }
        Err(DecodeReason::VarintTooLong)
    }

    proptest! {
        #[test]
        fn round_trip(v: u64) {
            let mut buf = Vec::new();
            encode_varint(v, &mut buf);
            prop_assert_eq!(buf.len(), encoded_len_varint(v));
            prop_assert_eq!(decode_varint(&buf), Ok((v, buf.len())));
        }

        #[test]
        fn agrees_with_naive(buf in proptest::collection::vec(any::<u8>(), 0..14)) {
            prop_assert_eq!(decode_varint(&buf), naive(&buf));
        }
    }

    #[test]
    fn edges() {
        assert_eq!(decode_varint(&[]), Err(DecodeReason::Truncated));
        assert_eq!(encoded_len_varint(0), 1);
        assert_eq!(encoded_len_varint(127), 1);
        assert_eq!(encoded_len_varint(128), 2);
        assert_eq!(encoded_len_varint(u64::MAX), 10);
        // -1 as int64: ten bytes, last 0x01
        let mut b = Vec::new();
        encode_varint(u64::MAX, &mut b);
        assert_eq!(
            b,
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
        // A 10th byte with high value bits set is accepted, bits dropped.
        let mut c = b.clone();
        c[9] = 0x7f;
        assert_eq!(decode_varint(&c), Ok((u64::MAX, 10)));
    }
}
