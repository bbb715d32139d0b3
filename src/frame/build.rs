//! Tiny frame builders for tests and examples (the real writers live elsewhere).

use super::crc::masked_crc32c;
use super::Framing;

/// Appends one TFRecord frame holding `data` to `out`.
///
/// ```
/// let mut file = Vec::new();
/// recordwire::frame::write_tfrecord_frame(&mut file, b"one");
/// recordwire::frame::write_tfrecord_frame(&mut file, b"two");
/// assert_eq!(file.len(), 2 * (12 + 3 + 4));
/// ```
pub fn write_tfrecord_frame(out: &mut Vec<u8>, data: &[u8]) {
    let length = (data.len() as u64).to_le_bytes();
    out.reserve(data.len().saturating_add(16));
    out.extend_from_slice(&length);
    out.extend_from_slice(&masked_crc32c(&length).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&masked_crc32c(data).to_le_bytes());
}

/// Appends one OFRecord frame holding `data` to `out`: its length as a
/// little-endian i64, then the data.
pub fn write_ofrecord_frame(out: &mut Vec<u8>, data: &[u8]) {
    // A slice holds at most isize::MAX bytes, so its length is a valid i64.
    out.reserve(data.len().saturating_add(8));
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(data);
}

/// Appends one frame of `framing` holding `data` to `out`.
pub fn write_frame(out: &mut Vec<u8>, framing: Framing, data: &[u8]) {
    match framing {
        Framing::TfRecord => write_tfrecord_frame(out, data),
        Framing::OfRecord => write_ofrecord_frame(out, data),
    }
}

/// One TFRecord frame holding `data`.
///
/// ```
/// let frame = recordwire::frame::tfrecord_frame(b"");
/// assert_eq!(frame, [0, 0, 0, 0, 0, 0, 0, 0, 0x29, 0x03, 0x98, 0x07, 0xd8, 0xea, 0x82, 0xa2]);
/// ```
pub fn tfrecord_frame(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    write_tfrecord_frame(&mut out, data);
    out
}

/// One OFRecord frame holding `data`.
///
/// ```
/// assert_eq!(recordwire::frame::ofrecord_frame(b"ab"), [2, 0, 0, 0, 0, 0, 0, 0, b'a', b'b']);
/// ```
pub fn ofrecord_frame(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    write_ofrecord_frame(&mut out, data);
    out
}

/// A whole file of `framing` holding `records` in order.
///
/// ```
/// use recordwire::frame::{file_of, records, Framing, ReadOptions};
///
/// let file = file_of(Framing::OfRecord, [&b"a"[..], b"bc"]);
/// let data: Vec<&[u8]> = records(&file, Framing::OfRecord, ReadOptions::default())
///     .map(|r| r.map(|r| r.data))
///     .collect::<Result<_, _>>()?;
/// assert_eq!(data, [&b"a"[..], b"bc"]);
/// # Ok::<(), recordwire::Error>(())
/// ```
pub fn file_of<'d>(framing: Framing, records: impl IntoIterator<Item = &'d [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for data in records {
        write_frame(&mut out, framing, data);
    }
    out
}
