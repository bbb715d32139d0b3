//! Pad frames (docs/FORMAT.md §7.5): valid frames that hold no record.
//!
//! A writer that aligns records to pages (the thesis's padding option, `pack
//! --pad-to-page`, [`crate::encode::WriterOptions::pad_to_page`]) fills the
//! space before a record with one *pad frame*. A pad frame is an ordinary
//! frame of the file's framing (TFRecord: both CRCs valid) whose payload is a
//! valid protobuf message that every standard reader decodes as an **empty
//! message** — `Example`, `SequenceExample` and `OFRecord` alike — and that
//! carries a marker, so that this project recognises it ([`is_pad`]) and
//! skips it: the frame readers pass over it without a record id (unless
//! [`ReadOptions::skip_pads`](super::ReadOptions::skip_pads) is off) and the
//! index builders never list pad frames, so record ids count records only.
//!
//! # The exact bytes
//!
//! The payload is exactly one field: number 536870911 (2^29 − 1, the largest
//! valid field number, which no schema uses) with wire type 2
//! (length-delimited). Every standard parser skips it as an unknown field.
//!
//! | bytes | what |
//! |---|---|
//! | `fa ff ff ff 0f` | the tag: varint of `(536870911 << 3) \| 2` = `0xfffffffa` ([`PAD_TAG`]) |
//! | 1 to 5 | `L`, the length of the field's bytes, as a varint (see below) |
//! | 15 | [`PAD_MARKER`]: the ASCII bytes `recordwire-pad` and a NUL |
//! | `L` − 15 | filler: zero bytes |
//!
//! so the payload has `5 + w + L` bytes, `w` being the width of the length
//! varint. The length varint has its minimal width when that can give the
//! payload size asked for; at the four sizes where it cannot (payloads of
//! 134, 16391, 2097160 and 268435465 bytes: the minimal encodings jump from
//! `w` to `w + 1` bytes there), `L` is written with one byte more than minimal
//! (e.g. 127 as `ff 00`), which protobuf parsers accept (docs/FORMAT.md §3.2: overlong
//! varints are valid).
//!
//! [`is_pad`] accepts exactly the payloads that start with [`PAD_TAG`], then a
//! length varint of at most 5 bytes whose value is the number of bytes left,
//! at least 15, of which the first 15 are [`PAD_MARKER`]. The filler is not
//! checked.
//!
//! # Sizes
//!
//! The smallest payload is [`MIN_PAD_PAYLOAD`] = 21 bytes (tag, a one-byte
//! length 15, the marker), so the smallest pad **frame** is 37 bytes for
//! TFRecord (12-byte header, 4-byte data CRC) and 29 bytes for OFRecord
//! ([`min_pad_frame_len`]); every larger size up to [`MAX_PAD_PAYLOAD`] plus
//! the framing's overhead can be made exactly ([`pad_payload`]).
//!
//! The thesis's padding algorithm fills the gap before a page boundary
//! whatever its size, but a pad can never be shorter than a frame header
//! (nor, here, than [`min_pad_frame_len`]): a writer that finds a gap smaller
//! than the minimum must either let the record cross the boundary or pad to
//! the *next* boundary (gap + page size).
//!
//! ```
//! use recordwire::frame::{records, Framing, ReadOptions};
//! use recordwire::frame::pad::{is_pad, min_pad_frame_len, pad_frame};
//! use recordwire::view::ExampleRef;
//!
//! let frame = pad_frame(100, Framing::TfRecord).unwrap();
//! assert_eq!(frame.len(), 100);
//! assert_eq!(min_pad_frame_len(Framing::TfRecord), 37);
//! // Readers skip pads by default; asked not to, they see a valid frame.
//! assert!(records(&frame, Framing::TfRecord, ReadOptions::default()).next().is_none());
//! let opts = ReadOptions::default().with_skip_pads(false);
//! let record = records(&frame, Framing::TfRecord, opts).next().unwrap()?;
//! assert!(is_pad(record.data));
//! // To TensorFlow (and to this crate's views) it is an empty Example.
//! let example = ExampleRef::parse(record.data, record.data_offset)?;
//! assert!(example.features().is_empty()?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::{write_frame, Framing};

/// The field number of the pad field: 2^29 − 1.
pub const PAD_FIELD: u32 = (1 << 29) - 1;

/// The tag of the pad field (field [`PAD_FIELD`], wire type 2) as its 5-byte varint.
pub const PAD_TAG: [u8; 5] = [0xfa, 0xff, 0xff, 0xff, 0x0f];

/// The marker that starts the pad field's bytes: `recordwire-pad` and a NUL.
pub const PAD_MARKER: &[u8; 15] = b"recordwire-pad\0";

/// The smallest pad payload: the tag, a one-byte length (15) and the marker.
pub const MIN_PAD_PAYLOAD: usize = PAD_TAG.len() + 1 + PAD_MARKER.len();

/// The largest pad payload: a field length must stay below 2^31 (the parsers
/// of docs/FORMAT.md §3.2 reject longer ones), written in 5 bytes.
pub const MAX_PAD_PAYLOAD: usize = PAD_TAG.len() + 5 + MAX_FIELD_LEN;

/// The largest length of the pad field's bytes.
const MAX_FIELD_LEN: usize = i32::MAX as usize;

/// Bytes a frame of `framing` adds around its payload (16 or 8).
const fn overhead(framing: Framing) -> usize {
    framing.header_len() + framing.footer_len()
}

/// The smallest pad frame of `framing`, header and CRCs included: 37 bytes for
/// TFRecord, 29 for OFRecord.
pub const fn min_pad_frame_len(framing: Framing) -> usize {
    MIN_PAD_PAYLOAD + overhead(framing)
}

/// The largest pad frame of `framing` ([`MAX_PAD_PAYLOAD`] plus the overhead).
pub const fn max_pad_frame_len(framing: Framing) -> usize {
    MAX_PAD_PAYLOAD + overhead(framing)
}

/// Whether `data` (a frame's payload) is a pad payload: see the
/// [module docs](self) for the exact rule.
///
/// This is the hook the frame readers and the index builders call on every
/// frame to leave pad frames out of the record ids. It is cheap: real
/// records fail on the first byte (a tf.Example starts with `0a`, an
/// OFRecord with `0a`, a SequenceExample with `0a` or `12`).
#[inline]
pub fn is_pad(data: &[u8]) -> bool {
    let Some(rest) = data.strip_prefix(&PAD_TAG) else {
        return false;
    };
    let mut len: u64 = 0;
    for (i, &b) in rest.iter().take(5).enumerate() {
        len |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            let field = &rest[i + 1..];
            return field.len() as u64 == len && field.starts_with(PAD_MARKER);
        }
    }
    false
}

/// The width of the length varint of a pad payload of `payload` bytes, and
/// the field length `L` that goes with it.
fn layout(payload: usize) -> Option<(usize, usize)> {
    if !(MIN_PAD_PAYLOAD..=MAX_PAD_PAYLOAD).contains(&payload) {
        return None;
    }
    let minimal = |len: usize| crate::wire::encoded_len_varint(len as u64);
    let fits = |w: usize| {
        let len = payload.checked_sub(PAD_TAG.len() + w)?;
        (len >= PAD_MARKER.len() && len <= MAX_FIELD_LEN).then_some(len)
    };
    // The minimal width when one gives the size exactly ...
    for w in 1..=5 {
        if let Some(len) = fits(w) {
            if minimal(len) == w {
                return Some((w, len));
            }
        }
    }
    // ... else one byte more than minimal (the four boundary sizes).
    (2..=5).find_map(|w| {
        fits(w)
            .filter(|&len| minimal(len) + 1 == w)
            .map(|len| (w, len))
    })
}

/// Appends to `out` the payload of a pad frame of `framing` whose whole frame
/// (header, payload and CRC) is exactly `total_frame_len` bytes; returns
/// `false` (appending nothing) when no pad frame has that size (below
/// [`min_pad_frame_len`] or above [`max_pad_frame_len`]).
pub fn write_pad_payload(out: &mut Vec<u8>, total_frame_len: usize, framing: Framing) -> bool {
    let Some(payload) = total_frame_len.checked_sub(overhead(framing)) else {
        return false;
    };
    let Some((width, len)) = layout(payload) else {
        return false;
    };
    out.reserve(payload);
    out.extend_from_slice(&PAD_TAG);
    // `len` in exactly `width` bytes (`width` is minimal or minimal + 1).
    for i in 0..width {
        let group = ((len >> (7 * i)) & 0x7f) as u8;
        out.push(if i + 1 < width { group | 0x80 } else { group });
    }
    out.extend_from_slice(PAD_MARKER);
    out.resize(out.len() + (len - PAD_MARKER.len()), 0);
    true
}

/// The payload of a pad frame of `framing` that is exactly `total_frame_len`
/// bytes long in all (see [`write_pad_payload`]); `None` when no pad frame has
/// that size.
///
/// ```
/// use recordwire::frame::Framing;
/// use recordwire::frame::pad::pad_payload;
///
/// let payload = pad_payload(37, Framing::TfRecord).unwrap();
/// assert_eq!(payload, b"\xfa\xff\xff\xff\x0f\x0frecordwire-pad\0");
/// assert_eq!(pad_payload(36, Framing::TfRecord), None);
/// assert_eq!(pad_payload(29, Framing::OfRecord).unwrap(), payload);
/// ```
pub fn pad_payload(total_frame_len: usize, framing: Framing) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    write_pad_payload(&mut out, total_frame_len, framing).then_some(out)
}

/// Appends to `out` a whole pad frame of `framing`, exactly `total_frame_len`
/// bytes long (TFRecord: with both CRCs); `false` (appending nothing) when no
/// pad frame has that size.
pub fn write_pad_frame(out: &mut Vec<u8>, total_frame_len: usize, framing: Framing) -> bool {
    let mut payload = Vec::new();
    if !write_pad_payload(&mut payload, total_frame_len, framing) {
        return false;
    }
    write_frame(out, framing, &payload);
    true
}

/// A whole pad frame of `framing`, exactly `total_frame_len` bytes long; `None`
/// when no pad frame has that size.
pub fn pad_frame(total_frame_len: usize, framing: Framing) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    write_pad_frame(&mut out, total_frame_len, framing).then_some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::frame::{parse_frame, ReadOptions, Status};
    use crate::view::{ExampleRef, OfRecordRef, SequenceExampleRef};

    const FRAMINGS: [Framing; 2] = [Framing::TfRecord, Framing::OfRecord];

    #[test]
    fn constants() {
        // The tag is the varint of (2^29 - 1) << 3 | 2.
        let mut tag = Vec::new();
        crate::wire::encode_varint(u64::from(PAD_FIELD) << 3 | 2, &mut tag);
        assert_eq!(tag, PAD_TAG);
        assert_eq!(MIN_PAD_PAYLOAD, 21);
        assert_eq!(min_pad_frame_len(Framing::TfRecord), 37);
        assert_eq!(min_pad_frame_len(Framing::OfRecord), 29);
        // Never shorter than a frame header (the thesis's bug).
        for f in FRAMINGS {
            assert!(min_pad_frame_len(f) > f.header_len());
        }
    }

    fn check_payload(payload: &[u8]) {
        assert!(is_pad(payload));
        let e = ExampleRef::parse(payload, 0).unwrap();
        assert!(e.features().is_empty().unwrap());
        assert_eq!(e.features().iter().count(), 0);
        let o = OfRecordRef::parse(payload, 0).unwrap();
        assert!(o.features().is_empty().unwrap());
        let s = SequenceExampleRef::parse(payload, 0).unwrap();
        assert!(s.context().is_empty().unwrap());
        assert!(s.feature_lists().is_empty().unwrap());
    }

    #[test]
    fn every_size_is_exact_and_empty() {
        for framing in FRAMINGS {
            let min = min_pad_frame_len(framing);
            for total in 0..min {
                assert_eq!(pad_payload(total, framing), None, "{total}");
                assert_eq!(pad_frame(total, framing), None, "{total}");
            }
            // Every size natively; under miri (far slower) every 241st.
            let step = if cfg!(miri) { 241 } else { 1 };
            for total in (min..=5000).step_by(step) {
                let frame = pad_frame(total, framing).unwrap();
                assert_eq!(frame.len(), total);
                let Ok(Status::Complete(parsed)) =
                    parse_frame(&frame, framing, &ReadOptions::default())
                else {
                    panic!("pad frame of {total} bytes does not parse");
                };
                assert_eq!(parsed.len, total);
                let payload = pad_payload(total, framing).unwrap();
                assert_eq!(parsed.data, payload);
                check_payload(&payload);
            }
        }
    }

    #[test]
    fn boundary_sizes_use_one_more_length_byte() {
        // Payload sizes where the minimal length varint cannot give the size.
        for (payload, width) in [
            (134usize, 2usize),
            (16391, 3),
            (2_097_160, 4),
            (268_435_465, 5),
        ] {
            let (w, len) = layout(payload).unwrap();
            assert_eq!((w, 5 + w + len), (width, payload));
            assert_eq!(crate::wire::encoded_len_varint(len as u64) + 1, w);
            // And around them the width is minimal.
            for p in [payload - 1, payload + 1] {
                let (w, len) = layout(p).unwrap();
                assert_eq!(crate::wire::encoded_len_varint(len as u64), w, "{p}");
            }
        }
        let p = pad_payload(134 + 16, Framing::TfRecord).unwrap();
        assert_eq!(&p[..7], &[0xfa, 0xff, 0xff, 0xff, 0x0f, 0xff, 0x00]);
        check_payload(&p);
        // (Under miri, which is far slower, not the 2 MB one.)
        let sizes: &[usize] = if cfg!(miri) {
            &[16391]
        } else {
            &[16391, 2_097_160]
        };
        for &payload in sizes {
            let p = pad_payload(payload + 8, Framing::OfRecord).unwrap();
            assert_eq!(p.len(), payload);
            check_payload(&p);
        }
    }

    #[test]
    fn largest_sizes() {
        assert_eq!(layout(MAX_PAD_PAYLOAD), Some((5, i32::MAX as usize)));
        assert_eq!(layout(MAX_PAD_PAYLOAD + 1), None);
        assert_eq!(max_pad_frame_len(Framing::TfRecord), MAX_PAD_PAYLOAD + 16);
        let mut out = Vec::new();
        assert!(!write_pad_payload(&mut out, usize::MAX, Framing::TfRecord));
        assert!(out.is_empty());
    }

    #[test]
    fn not_pads() {
        let good = pad_payload(60, Framing::OfRecord).unwrap();
        assert!(is_pad(&good));
        // One byte more or less: the length no longer matches.
        assert!(!is_pad(&good[..good.len() - 1]));
        let mut longer = good.clone();
        longer.push(0);
        assert!(!is_pad(&longer));
        // A damaged marker.
        let mut bad = good.clone();
        bad[8] ^= 1;
        assert!(!is_pad(&bad));
        // Another field number, or an overlong tag.
        let mut other = good.clone();
        other[0] = 0xf2;
        assert!(!is_pad(&other));
        assert!(!is_pad(b""));
        assert!(!is_pad(&PAD_TAG));
        assert!(!is_pad(b"\x0a\x00"));
        // A length varint longer than 5 bytes.
        let mut long_len = PAD_TAG.to_vec();
        long_len.extend_from_slice(&[0x8f, 0x80, 0x80, 0x80, 0x80, 0x00]);
        long_len.extend_from_slice(PAD_MARKER);
        assert!(!is_pad(&long_len));
        // A marker with a shorter field length (15 is the least).
        let mut short = PAD_TAG.to_vec();
        short.push(14);
        short.extend_from_slice(&PAD_MARKER[..14]);
        assert!(!is_pad(&short));
    }

    #[test]
    fn overlong_lengths_are_pads_too() {
        // Any length encoding up to 5 bytes is accepted.
        let mut p = PAD_TAG.to_vec();
        p.extend_from_slice(&[0x8f, 0x80, 0x80, 0x80, 0x00]);
        p.extend_from_slice(PAD_MARKER);
        check_payload(&p);
    }
}
