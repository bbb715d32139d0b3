//! Masked CRC32C, as TFRecord stores it (docs/FORMAT.md §1.3).
//!
//! TFRecord does not store the plain CRC32C (Castagnoli) of a byte run but a
//! *masked* one, so that a CRC computed over bytes that themselves contain CRCs
//! stays well distributed:
//!
//! ```text
//! masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8    (wrapping u32)
//! ```

/// The constant TFRecord adds after rotating a CRC (see [`mask`]).
pub const MASK_DELTA: u32 = 0xa282_ead8;

/// Masks a CRC32C the way TFRecord stores it: rotate right by 15 bits, then add
/// [`MASK_DELTA`], wrapping.
///
/// ```
/// use recordwire::frame::{mask, unmask};
/// assert_eq!(unmask(mask(0xe306_9283)), 0xe306_9283);
/// ```
#[inline]
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverts [`mask`]: subtract [`MASK_DELTA`] (wrapping), then rotate left by 15 bits.
#[inline]
pub fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// The masked CRC32C of `data`, as stored in a TFRecord frame (computed by
/// the kernels of `crate::arch`: three interleaved `crc32` streams where the
/// CPU has SSE4.2 and PCLMULQDQ).
///
/// ```
/// // The header of an empty record: length 0 as u64 little-endian, then its masked CRC.
/// assert_eq!(recordwire::frame::masked_crc32c(&0u64.to_le_bytes()), 0x0798_0329);
/// ```
#[inline]
pub fn masked_crc32c(data: &[u8]) -> u32 {
    mask(crate::arch::crc32c(0, data))
}

/// The masked CRC32C of one 8-byte word (a TFRecord length): one `crc32`
/// instruction where the CPU has it, else eight lookups in an 8 KiB table
/// (`crate::arch`). Equal to [`masked_crc32c`] of the same bytes (tested).
#[inline(always)]
pub fn masked_crc32c_u64(bytes: [u8; 8]) -> u32 {
    mask(crate::arch::crc32c_u64(u64::from_le_bytes(bytes)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_length_crc_matches_the_general_one() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut words = vec![0u64, 1, u64::MAX, 0x8000_0000_0000_0000, 0xff];
        // (Fewer under miri, which is far slower.)
        for _ in 0..if cfg!(miri) { 200 } else { 10_000 } {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            words.push(x);
            words.push(x & 0xffff);
        }
        for w in words {
            let b = w.to_le_bytes();
            assert_eq!(masked_crc32c_u64(b), masked_crc32c(&b), "{w:#x}");
        }
    }

    #[test]
    fn crc32c_check_value() {
        // The standard check value of CRC-32C (iSCSI).
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(crc32c::crc32c(b""), 0);
    }

    #[test]
    #[allow(clippy::manual_rotate)] // the formula as docs/FORMAT.md §1.3 writes it
    fn mask_formula() {
        let crc = 0xe306_9283u32;
        let expected = ((crc >> 15) | (crc << 17)).wrapping_add(0xa282_ead8);
        assert_eq!(mask(crc), expected);
        assert_eq!(masked_crc32c(b"123456789"), expected);
        // Wrapping: a rotated value near u32::MAX overflows when the delta is added.
        assert_eq!(mask(u32::MAX), u32::MAX.wrapping_add(MASK_DELTA));
    }

    #[test]
    fn mask_roundtrip() {
        for crc in [0, 1, 0x8000_0000, 0xe306_9283, u32::MAX, 0x5d5d_5d5d] {
            assert_eq!(unmask(mask(crc)), crc);
            assert_eq!(mask(unmask(crc)), crc);
        }
    }

    #[test]
    #[allow(clippy::manual_rotate)] // the formula as docs/FORMAT.md §1.3 writes it
    fn empty_record_header_crc() {
        // Rotate and add the delta by hand, independently of `mask`.
        let crc = crc32c::crc32c(&[0u8; 8]);
        assert_eq!(crc, 0x8c28_b28a);
        let by_hand = ((crc >> 15) | (crc << 17)).wrapping_add(0xa282_ead8);
        assert_eq!(masked_crc32c(&0u64.to_le_bytes()), by_hand);
        // The bytes TensorFlow writes for an empty record (`tf.io.TFRecordWriter`):
        // 00 00 00 00 00 00 00 00 | 29 03 98 07 | (no data) | d8 ea 82 a2
        assert_eq!(by_hand.to_le_bytes(), [0x29, 0x03, 0x98, 0x07]);
        assert_eq!(masked_crc32c(b""), MASK_DELTA);
    }
}
