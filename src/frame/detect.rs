//! Telling the framing and compression of a file from its first bytes
//! (docs/FORMAT.md §1.6).

use super::parse::{is_tfrecord_header, TFRECORD_HEADER_LEN};

/// What the first bytes of a file look like; see [`detect`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Detected {
    /// A TFRecord header with a matching length CRC, or an empty input.
    TfRecord,
    /// A GZIP member header (compressed TFRecord).
    Gzip,
    /// A ZLIB stream header (compressed TFRecord).
    Zlib,
    /// Anything else.
    OfRecord,
}

/// Guesses what a file holds from its first bytes (docs/FORMAT.md §1.6, "Detection").
///
/// `prefix` is the start of the file; 12 bytes are enough, fewer are fine (a
/// file shorter than 12 bytes cannot start with a TFRecord header).
///
/// 1. Empty input: [`Detected::TfRecord`] (zero records).
/// 2. The first 12 bytes are a TFRecord header whose length CRC matches:
///    [`Detected::TfRecord`].
/// 3. `1f 8b 08` (GZIP magic and the deflate method): [`Detected::Gzip`].
/// 4. A ZLIB header: `CM` = 8 (deflate), `CINFO` ≤ 7, no preset dictionary,
///    and `(CMF * 256 + FLG) % 31 == 0`, not followed by five zero bytes
///    (which no deflate stream starts with, and which every OFRecord length
///    below 2^16 has): [`Detected::Zlib`].
/// 5. Anything else: [`Detected::OfRecord`].
///
/// An OFRecord file whose first length (of 2^16 bytes or more) happens to
/// start with bytes that look like a GZIP or ZLIB header is detected as
/// compressed; name the compression explicitly for such files.
///
/// ```
/// use recordwire::frame::{detect, tfrecord_frame, Detected};
///
/// assert_eq!(detect(&tfrecord_frame(b"hello")), Detected::TfRecord);
/// assert_eq!(detect(&[0x1f, 0x8b, 0x08, 0x00]), Detected::Gzip);
/// assert_eq!(detect(&[0x78, 0x9c, 0x01]), Detected::Zlib);
/// assert_eq!(detect(&5i64.to_le_bytes()), Detected::OfRecord);
/// // An OFRecord length of 376: `78 01`, a ZLIB header, then zeros.
/// assert_eq!(detect(&376i64.to_le_bytes()), Detected::OfRecord);
/// assert_eq!(detect(b""), Detected::TfRecord);
/// ```
pub fn detect(prefix: &[u8]) -> Detected {
    if prefix.is_empty() {
        return Detected::TfRecord;
    }
    if let Some(header) = prefix.first_chunk::<TFRECORD_HEADER_LEN>() {
        if is_tfrecord_header(header) {
            return Detected::TfRecord;
        }
    }
    if prefix.starts_with(&[0x1f, 0x8b, 0x08]) {
        return Detected::Gzip;
    }
    if let Some(&[cmf, flg]) = prefix.first_chunk::<2>() {
        let method = cmf & 0x0f;
        let window = cmf >> 4;
        let preset_dictionary = flg & 0x20 != 0;
        let check = (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0;
        // A deflate stream cannot start with five zero bytes (a stored block
        // with LEN 0 and NLEN 0, which must be LEN's complement), but an
        // OFRecord length below 2^16 whose low bytes form a ZLIB header does
        // (376 is `78 01 00 00 00 00 00 00`).
        let impossible_deflate = prefix.get(2..7) == Some(&[0; 5]);
        if method == 8 && window <= 7 && !preset_dictionary && check && !impossible_deflate {
            return Detected::Zlib;
        }
    }
    Detected::OfRecord
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::frame::{ofrecord_frame, tfrecord_frame};

    #[test]
    fn every_small_ofrecord_length_is_detected_as_ofrecord() {
        // Found by the index round-trip property test: a first record of 376
        // bytes starts `78 01`, a valid ZLIB header.
        let mut zlib_like = 0;
        // Every length natively; under miri (far slower) every 97th and 376,
        // which still meets ZLIB-looking ones (checked below).
        let step = if cfg!(miri) { 97 } else { 1 };
        for len in (0..(1u32 << 16)).step_by(step).chain([376]) {
            let mut file = i64::from(len).to_le_bytes().to_vec();
            file.extend_from_slice(&[0xab; 16]);
            let (cmf, flg) = (file[0], file[1]);
            if cmf & 0x0f == 8 && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0 {
                zlib_like += 1;
            }
            assert_eq!(detect(&file), Detected::OfRecord, "length {len}");
        }
        assert!(zlib_like > 0, "the loop covers lengths that look like ZLIB");
        // A real ZLIB stream is still detected.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut z, &[0u8; 1000]).unwrap();
        assert_eq!(detect(&z.finish().unwrap()), Detected::Zlib);
    }

    #[test]
    fn detection() {
        assert_eq!(detect(b""), Detected::TfRecord);
        assert_eq!(detect(&tfrecord_frame(b"")), Detected::TfRecord);
        assert_eq!(detect(&tfrecord_frame(&[7; 300])), Detected::TfRecord);
        // A TFRecord header alone, data missing: still TFRecord (then truncated).
        assert_eq!(detect(&tfrecord_frame(b"abc")[..12]), Detected::TfRecord);
        // A damaged length CRC is not a TFRecord header.
        let mut bad = tfrecord_frame(b"abc");
        bad[8] ^= 1;
        assert_eq!(detect(&bad), Detected::OfRecord);
        assert_eq!(
            detect(&[0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]),
            Detected::Gzip
        );
        assert_eq!(detect(&[0x1f, 0x8b]), Detected::OfRecord);
        for zlib in [
            [0x78, 0x01],
            [0x78, 0x5e],
            [0x78, 0x9c],
            [0x78, 0xda],
            [0x08, 0x1d],
        ] {
            assert_eq!(detect(&zlib), Detected::Zlib, "{zlib:02x?}");
        }
        // Wrong method, window too large, preset dictionary, bad check bits.
        for not_zlib in [[0x79, 0x9c], [0x88, 0x98], [0x78, 0xbb], [0x78, 0x9d]] {
            assert_eq!(detect(&not_zlib), Detected::OfRecord, "{not_zlib:02x?}");
        }
        assert_eq!(detect(&ofrecord_frame(b"hello")), Detected::OfRecord);
        assert_eq!(detect(&[0]), Detected::OfRecord);
    }
}
