//! Base-128 varints.
//!
//! Decoding follows Google's parsers: at most 10 bytes; in the 10th byte only
//! the continuation bit matters (bits past the 64th are dropped); overlong
//! (non-minimal) encodings are accepted.

use super::DecodeReason;
use crate::arch::scalar::{compact, varints_in_word, word_at, HIGH_BITS, PAYLOAD_BITS};

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

/// When `bytes` is exactly one varint (of at most 10 bytes): its value, as
/// [`decode_varint`] reads it. The packed run of a one-value list.
#[inline]
pub(crate) fn single_varint(bytes: &[u8]) -> Option<u64> {
    let (&last, init) = bytes.split_last()?;
    if last >= 0x80 || init.len() > 9 || init.iter().any(|&b| b < 0x80) {
        return None;
    }
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
    }
    Some(value)
}

#[inline]
fn decode_varint_slow(buf: &[u8]) -> Result<(u64, usize), DecodeReason> {
    if let Some(w) = word_at(buf, 0) {
        // Up to 8 bytes without a branch per byte: the first terminator
        // gives the length, one compaction the value.
        let ends = !w & HIGH_BITS;
        if ends != 0 {
            let end = ends.trailing_zeros() + 1;
            let value = compact(w & PAYLOAD_BITS & (u64::MAX >> (64 - end)));
            return Ok((value, (end / 8) as usize));
        }
    }
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
///
/// Eight bytes are looked at a time (`crate::arch::varint_words`: a word
/// with no continuation bit is eight one-byte values; otherwise every varint
/// ending in the word is decoded from it and the next word starts after the
/// last of them). The last bytes of the run are read as one zero-padded
/// word. Varints longer than 8 bytes and every error go through the
/// byte-at-a-time decoder, so errors and their offsets are exactly those of
/// [`decode_varint`].
#[inline]
pub(crate) fn for_each_packed_varint(
    bytes: &[u8],
    mut each: impl FnMut(u64),
) -> Result<usize, (usize, DecodeReason)> {
    let mut i = 0;
    let mut n = 0;
    loop {
        // Whole words through the CPU kernel, while varints end in them.
        let (used, count) =
            crate::arch::varint_words(bytes.get(i..).unwrap_or_default(), &mut each);
        i += used;
        n += count;
        let used = match word_at(bytes, i) {
            // A word in which no varint ends.
            Some(_) => 0,
            None => {
                let rest = bytes.get(i..).unwrap_or_default();
                if rest.is_empty() {
                    return Ok(n);
                }
                // The last bytes, as one zero-padded word.
                let mut last = [0u8; 8];
                last[..rest.len()].copy_from_slice(rest);
                let w = u64::from_le_bytes(last);
                let ends = !w & HIGH_BITS & (HIGH_BITS >> (8 * (8 - rest.len())));
                varints_in_word(w, ends, &mut n, &mut each)
            }
        };
        if used == 0 {
            // No varint ends in these bytes: a long one, or an error.
            let (v, len) = decode_varint_slow(&bytes[i..]).map_err(|r| (i, r))?;
            each(v);
            n += 1;
            i += len;
        } else {
            i += used;
        }
    }
}

/// [`for_each_packed_varint`] into a slice: decodes a packed run into
/// `out` (as many values as fit) and returns how many values the run has.
/// Errors carry offsets relative to the run's start, as
/// [`for_each_packed_varint`] reports them.
///
/// While 8 slots are free the words go through
/// `crate::arch::varints_into` (sixteen one-byte varints widened at a
/// time, words of short varints through a shuffle table, others a word at
/// a time), then the rest through [`for_each_packed_varint`].
#[inline]
pub(crate) fn decode_packed_into(
    bytes: &[u8],
    out: &mut [u64],
) -> Result<usize, (usize, DecodeReason)> {
    let (used, n) = crate::arch::varints_into(bytes, out);
    let mut free = out.get_mut(n..).unwrap_or_default().iter_mut();
    let rest = for_each_packed_varint(bytes.get(used..).unwrap_or_default(), |v| {
        if let Some(slot) = free.next() {
            *slot = v;
        }
    })
    .map_err(|(at, reason)| (used + at, reason))?;
    Ok(n + rest)
}

/// Counts the varints of a packed run and checks that each is complete and
/// at most 10 bytes long, without decoding them; errors carry offsets
/// relative to the run's start, as [`for_each_packed_varint`] reports them.
///
/// The count is the number of bytes with a clear high bit; the only other
/// thing to track is the run of continuation bytes. Whole 64-byte blocks go
/// through `crate::arch::varint_ends`; the last bytes too, copied into a
/// block of zeros (each zero a one-byte varint, taken off the count; a run
/// that reaches the zeros is a varint the run cuts short), or one at a time
/// when they are few.
#[inline(never)]
pub(crate) fn count_packed_varints(bytes: &[u8]) -> Result<usize, (usize, DecodeReason)> {
    let blocks = crate::arch::varint_ends(bytes, 0);
    let mut n = blocks.ends;
    let mut too_long = blocks.too_long;
    let tail = &bytes[blocks.used..];
    if tail.len() >= SHORT_TAIL {
        let mut last = [0u8; 64];
        last[..tail.len()].copy_from_slice(tail);
        // A carried run of 10 has already set `too_long`; the kernel takes
        // runs below 10.
        let end = crate::arch::varint_ends(&last, blocks.run.min(9));
        too_long |= end.too_long;
        n += end.ends - (64 - tail.len());
    } else {
        // A few bytes: one at a time is cheaper than the copy.
        let mut run = blocks.run;
        for &b in tail {
            if b < 0x80 {
                n += 1;
                run = 0;
            } else {
                run += 1;
                too_long |= run >= 10;
            }
        }
    }
    if too_long || bytes.last().is_some_and(|&b| b >= 0x80) {
        return Err(count_error(bytes));
    }
    Ok(n)
}

/// Below this many bytes after the whole blocks, [`count_packed_varints`]
/// reads them one at a time rather than copying them into a block.
const SHORT_TAIL: usize = 16;

/// The first error of a packed run, found byte by byte (the error path of
/// [`count_packed_varints`], which only knows that there is one).
#[cold]
fn count_error(bytes: &[u8]) -> (usize, DecodeReason) {
    match for_each_packed_varint(bytes, |_| {}) {
        Err(e) => e,
        // Unreachable when the word loop is right; a decode error is the
        // safe answer (tested against this function by the property tests).
        Ok(_) => (0, DecodeReason::Truncated),
    }
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
        #![proptest_config(crate::test_util::proptest_config())]

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

        /// `single_varint` is `decode_varint` when that reads the whole
        /// buffer, and `None` otherwise (runs biased to continuation bytes).
        #[test]
        fn single_varint_is_a_whole_buffer_varint(
            buf in proptest::collection::vec(
                prop_oneof![0u8..0x80, 0x80u8..=0xff, Just(0xffu8)], 0..13),
        ) {
            let whole = match naive(&buf) {
                Ok((v, n)) if n == buf.len() => Some(v),
                _ => None,
            };
            prop_assert_eq!(single_varint(&buf), whole);
        }

        /// The word-at-a-time packed decoder and counter against a naive
        /// loop over `decode_varint`, on runs biased towards continuation
        /// bytes (so 9-, 10- and 11-byte varints and truncations happen).
        #[test]
        fn packed_runs_agree_with_naive(
            buf in proptest::collection::vec(
                prop_oneof![0u8..0x80, 0x80u8..=0xff, Just(0xffu8), Just(0x80u8)], 0..300),
            room in 0usize..300,
        ) {
            let mut expected = Vec::new();
            let mut i = 0;
            let naive_result = loop {
                if i == buf.len() {
                    break Ok(expected.len());
                }
                match naive(&buf[i..]) {
                    Ok((v, len)) => {
                        expected.push(v);
                        i += len;
                    }
                    Err(r) => break Err((i, r)),
                }
            };
            let mut got = Vec::new();
            let r = for_each_packed_varint(&buf, |v| got.push(v));
            prop_assert_eq!(r, naive_result);
            if r.is_ok() {
                prop_assert_eq!(&got, &expected);
            } else {
                prop_assert_eq!(&got[..], &expected[..]);
            }
            prop_assert_eq!(count_packed_varints(&buf), naive_result);
            check_into(&buf, room, naive_result, &expected)?;
        }

        /// Minimal encodings of any values decode back through the word path.
        #[test]
        fn packed_round_trip(values in proptest::collection::vec(any::<u64>(), 0..40),
                             small in proptest::collection::vec(0u64..0x4000, 0..40),
                             tiny in proptest::collection::vec(0u64..0x80, 0..100),
                             room in 0usize..200) {
            let all: Vec<u64> = values.iter().chain(&small).chain(&tiny).chain(&small).copied().collect();
            let mut buf = Vec::new();
            for &v in &all {
                encode_varint(v, &mut buf);
            }
            let mut got = Vec::new();
            prop_assert_eq!(for_each_packed_varint(&buf, |v| got.push(v)), Ok(all.len()));
            prop_assert_eq!(got, all.clone());
            prop_assert_eq!(count_packed_varints(&buf), Ok(all.len()));
            check_into(&buf, room, Ok(all.len()), &all)?;
        }
    }

    /// `decode_packed_into` with `room` slots: the same result as the
    /// reference (`want`, `values` decoded before any error), the values
    /// that fit in order, and no slot past them written.
    fn check_into(
        buf: &[u8],
        room: usize,
        want: Result<usize, (usize, DecodeReason)>,
        values: &[u64],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        const UNTOUCHED: u64 = 0xdead_beef_dead_beef;
        let mut out = vec![UNTOUCHED; room];
        prop_assert_eq!(decode_packed_into(buf, &mut out), want);
        let k = values.len().min(room);
        prop_assert_eq!(&out[..k], &values[..k]);
        prop_assert!(
            out[k..].iter().all(|&v| v == UNTOUCHED),
            "a slot past the values changed"
        );
        Ok(())
    }

    #[test]
    fn words_of_mixed_lengths() {
        // 1, 2, 3 and 8 bytes, across word boundaries, and a 9- and 10-byte value.
        let values = [5u64, 300, 70_000, (1 << 56) - 1, 1 << 56, u64::MAX, 0, 127];
        let mut buf = Vec::new();
        for &v in &values {
            encode_varint(v, &mut buf);
        }
        let mut got = Vec::new();
        assert_eq!(
            for_each_packed_varint(&buf, |v| got.push(v)),
            Ok(values.len())
        );
        assert_eq!(got, values);
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
