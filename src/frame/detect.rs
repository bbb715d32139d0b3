//! Telling the framing and compression of a file from its first bytes and,
//! optionally, a framing its name suggests (docs/FORMAT.md §1.6); and saying
//! in plain words what an input is when it fits neither framing.
//!
//! Everything here is a pure function of bytes: the file-name part (which
//! names suggest which framing) is [`crate::io::framing_hint`].

use std::fmt::Write as _;

use super::parse::{is_tfrecord_header, Framing, TFRECORD_HEADER_LEN};
use crate::error::{Error, ErrorKind};

/// What the first bytes of a file look like; see [`detect`] and
/// [`detect_with_hint`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Detected {
    /// A TFRecord header with a matching length CRC, or an empty input (or,
    /// from [`detect_with_hint`], an input whose name says TFRecord).
    TfRecord,
    /// A GZIP member header (compressed TFRecord).
    Gzip,
    /// A ZLIB stream header (compressed TFRecord).
    Zlib,
    /// Anything else (or, from [`detect_with_hint`], an input whose name says
    /// OFRecord and that does not start with a valid TFRecord header).
    OfRecord,
}

/// Guesses what a file holds from its first bytes alone (docs/FORMAT.md §1.6, "Detection").
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
/// The readers ([`Source`](crate::io::Source),
/// [`RecordFile`](crate::io::RecordFile)) use [`detect_with_hint`], with the
/// framing the file's name suggests, and refuse, in plain words, a file whose
/// first bytes fit neither framing (see there).
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
    if starts_with_tfrecord_header(prefix) {
        return Detected::TfRecord;
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

/// Whether `prefix` starts with a TFRecord header whose length CRC matches.
fn starts_with_tfrecord_header(prefix: &[u8]) -> bool {
    prefix
        .first_chunk::<TFRECORD_HEADER_LEN>()
        .is_some_and(is_tfrecord_header)
}

/// [`detect`], with the framing the file's name suggests (`hint`, from
/// [`crate::io::framing_hint`]; `None` when the name says nothing).
///
/// The bytes win where they cannot be wrong by chance, the name decides
/// where they say nothing certain (docs/FORMAT.md §1.6):
///
/// | first bytes | no hint | hint TFRecord | hint OFRecord |
/// |---|---|---|---|
/// | none (empty file) | `TfRecord` | `TfRecord` | `OfRecord` |
/// | a TFRecord header with a matching length CRC | `TfRecord` | `TfRecord` | `TfRecord` |
/// | a GZIP / ZLIB header | `Gzip` / `Zlib` | `Gzip` / `Zlib` | `Gzip` / `Zlib` |
/// | anything else | `OfRecord` | `TfRecord` | `OfRecord` |
///
/// A matching length CRC happens by chance once in 2^32, so a valid
/// TFRecord header beats an OFRecord name. A file named as TFRecord whose
/// first bytes are not a valid header is a TFRecord file whose first header
/// is damaged: it is read as TFRecord, which reports `length_crc_mismatch`
/// at record 0 (and, in skip mode, resynchronises), or `truncated_header`
/// (needing 12 bytes) when it is shorter than a header.
///
/// The framing inside a compressed file is the hint's, TFRecord without one
/// (the readers decide that; this function only tells that it is compressed).
///
/// ```
/// use recordwire::frame::{detect_with_hint, tfrecord_frame, Detected, Framing};
///
/// let mut damaged = tfrecord_frame(b"abc");
/// damaged[8] ^= 1; // the first length CRC
/// assert_eq!(detect_with_hint(&damaged, None), Detected::OfRecord);
/// assert_eq!(detect_with_hint(&damaged, Some(Framing::TfRecord)), Detected::TfRecord);
/// // A valid TFRecord header wins over a name that says OFRecord.
/// let good = tfrecord_frame(b"abc");
/// assert_eq!(detect_with_hint(&good, Some(Framing::OfRecord)), Detected::TfRecord);
/// assert_eq!(detect_with_hint(b"", Some(Framing::OfRecord)), Detected::OfRecord);
/// ```
pub fn detect_with_hint(prefix: &[u8], hint: Option<Framing>) -> Detected {
    match (detect(prefix), hint) {
        (Detected::TfRecord, Some(Framing::OfRecord)) if prefix.is_empty() => Detected::OfRecord,
        (Detected::OfRecord, Some(Framing::TfRecord)) => Detected::TfRecord,
        (detected, _) => detected,
    }
}

/// How the framing being read was chosen; it decides whether an error in the
/// first frame says that the input is not a record file at all
/// ([`not_record_file`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Basis {
    /// Named by the caller (`--framing`, `OpenOptions::framing`): never
    /// second-guessed.
    #[default]
    Named,
    /// A valid TFRecord header, or an empty file: certain.
    Header,
    /// Assumed: from the file's name, or TFRecord inside a compressed file.
    /// An error in the first frame says "not a TFRecord or OFRecord file"
    /// only when the first bytes are recognisably something else (a known
    /// file signature, or text).
    Assumed,
    /// Nothing said anything: OFRecord because it is not TFRecord. An error
    /// in the first frame always says "not a TFRecord or OFRecord file".
    Fallback,
}

/// The message of an error found in the first frame (at byte 0) of an input
/// whose framing was chosen on `basis`, when that error means that the input
/// is not a record file at all: `not a TFRecord or OFRecord file: …`, saying
/// what the first bytes look like and why neither framing fits. `head` is
/// the start of the input: at most the header length of the framing read.
///
/// `None` when the error is an ordinary one: the framing was named or
/// certain, the kind is not a framing error of the first header
/// (`truncated_header`, `truncated_data`, `invalid_length`,
/// `length_crc_mismatch`), or the framing was assumed and the bytes are not
/// recognisably something else.
///
/// The error keeps its kind (and values): only its message changes
/// (docs/FORMAT.md §1.6, §8.2).
/// `err`, met at record 0 and byte 0 by a reader that does not walk the
/// frames itself (an index builder), with the message the frame walk would
/// give it: `not a TFRecord or OFRecord file: …` when `data` (the input's
/// first bytes, any length), read as `framing`, fits neither framing.
pub(crate) fn explain_first_frame(
    err: Error,
    data: &[u8],
    framing: Framing,
    basis: Basis,
) -> Error {
    if err.record() != Some(0) || err.offset() != Some(0) || err.detail().is_some() {
        return err;
    }
    let head = data.get(..framing.header_len()).unwrap_or(data);
    match not_record_file(head, err.kind(), basis) {
        Some(detail) => err.with_detail(detail),
        None => err,
    }
}

pub(crate) fn not_record_file(head: &[u8], kind: &ErrorKind, basis: Basis) -> Option<String> {
    let why = match *kind {
        ErrorKind::TruncatedHeader { available, .. } => format!(
            "only {available} byte{}, fewer than a frame header (12 bytes for TFRecord, 8 for OFRecord)",
            if available == 1 { "" } else { "s" }
        ),
        ErrorKind::TruncatedData {
            declared,
            available,
        } => format!(
            "not a TFRecord header, and as an OFRecord header it declares {declared} bytes, \
             {available} available"
        ),
        ErrorKind::InvalidLength { length } => format!(
            "not a TFRecord header, and as an OFRecord header it declares a negative length ({length})"
        ),
        ErrorKind::LengthCrcMismatch { stored, computed } => format!(
            "as a TFRecord header, its length CRC does not match (stored {stored:#010x}, \
             computed {computed:#010x})"
        ),
        _ => return None,
    };
    let looks = Looks::of(head);
    let refuse = match basis {
        Basis::Named | Basis::Header => false,
        // A short head is more likely a record file cut short than anything else.
        Basis::Assumed => looks != Looks::Bytes && head.len() >= 8,
        Basis::Fallback => true,
    };
    if !refuse {
        return None;
    }
    Some(format!(
        "not a TFRecord or OFRecord file: {}; {why}",
        looks.describe(head)
    ))
}

/// What the first bytes of an input look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Looks {
    /// The signature of a known file format.
    Signature(&'static str),
    /// Text: printable UTF-8 (with tabs and line ends), at least 4 bytes.
    Text,
    /// Nothing recognisable.
    Bytes,
}

/// File signatures ("magic numbers") of formats that get mistaken for record
/// files. [`Looks::of`] believes them only when the 8 bytes they start, read
/// as a length, declare 2^48 bytes or more (or a negative length), which no
/// record file does: `BZh` followed by zeros is an OFRecord length of 6.8 MB.
const SIGNATURES: &[(&[u8], &str)] = &[
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF8", "GIF"),
    (b"%PDF-", "PDF"),
    (b"PK\x03\x04", "ZIP"),
    (b"\x7fELF", "ELF"),
    (b"\x89HDF\r\n\x1a\n", "HDF5"),
    (b"\x93NUMPY", "NumPy"),
    (b"PAR1", "Parquet"),
    (b"RIFF", "RIFF"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "XZ"),
    (b"\x28\xb5\x2f\xfd", "Zstandard"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip"),
];

impl Looks {
    /// What `head` looks like. Only what cannot start a record file counts
    /// as something else: 8 bytes or more whose bytes 6 and 7 are zero (as a
    /// length, less than 2^48 bytes) are [`Looks::Bytes`]; a signature needs
    /// 8 bytes; text needs 4 bytes (fewer can be the start of a length).
    fn of(head: &[u8]) -> Looks {
        match head.get(6..8) {
            Some([0, 0]) => return Looks::Bytes,
            Some(_) => {
                if let Some(&(_, name)) = SIGNATURES.iter().find(|(sig, _)| head.starts_with(sig)) {
                    return Looks::Signature(name);
                }
            }
            None => {}
        }
        if head.len() >= 4 && is_text(head) {
            return Looks::Text;
        }
        Looks::Bytes
    }

    fn describe(self, head: &[u8]) -> String {
        match self {
            Looks::Signature(name) => {
                format!("it starts with the {name} signature ({})", hex(head))
            }
            Looks::Text => format!("it starts with text ({:?})", text_part(head)),
            Looks::Bytes => format!("it starts with the bytes {}", hex(head)),
        }
    }
}

/// Whether `head` is text: UTF-8 (a sequence cut at the end allowed) without
/// control characters other than tab, line feed and carriage return.
fn is_text(head: &[u8]) -> bool {
    let text = text_part(head);
    let complete = match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    };
    complete
        && !text.is_empty()
        && text
            .chars()
            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
}

/// The longest valid UTF-8 start of `head`.
fn text_part(head: &[u8]) -> &str {
    match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) => {
            std::str::from_utf8(head.get(..e.valid_up_to()).unwrap_or_default()).unwrap_or_default()
        }
    }
}

/// `89 50 4e 47`.
fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{b:02x}");
    }
    out
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

    #[test]
    fn hints() {
        let good = tfrecord_frame(b"abc");
        let mut damaged = good.clone();
        damaged[8] ^= 1;
        let of = ofrecord_frame(b"abc");
        let gz = [0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff];
        let (tf, ofr) = (Some(Framing::TfRecord), Some(Framing::OfRecord));
        let cases: [(&[u8], Option<Framing>, Detected); 15] = [
            (b"", None, Detected::TfRecord),
            (b"", tf, Detected::TfRecord),
            (b"", ofr, Detected::OfRecord),
            (&good, None, Detected::TfRecord),
            (&good, tf, Detected::TfRecord),
            (&good, ofr, Detected::TfRecord),
            (&damaged, None, Detected::OfRecord),
            (&damaged, tf, Detected::TfRecord),
            (&damaged, ofr, Detected::OfRecord),
            (&of, None, Detected::OfRecord),
            (&of, tf, Detected::TfRecord),
            (&of, ofr, Detected::OfRecord),
            (&gz, None, Detected::Gzip),
            (&gz, tf, Detected::Gzip),
            (&gz, ofr, Detected::Gzip),
        ];
        for (bytes, hint, want) in cases {
            assert_eq!(detect_with_hint(bytes, hint), want, "{bytes:02x?} {hint:?}");
        }
    }

    #[test]
    fn what_the_first_bytes_look_like() {
        assert_eq!(Looks::of(b"\x89PNG\r\n\x1a\n"), Looks::Signature("PNG"));
        assert_eq!(
            Looks::of(b"\xff\xd8\xff\xe0\x00\x10JF"),
            Looks::Signature("JPEG")
        );
        // A signature followed by zeros is a plausible length (6.8 MB), and
        // one in fewer than 8 bytes cannot be told from the start of one.
        assert_eq!(Looks::of(b"BZh\0\0\0\0\0"), Looks::Bytes);
        assert_eq!(Looks::of(b"\xff\xd8\xff\xe0"), Looks::Bytes);
        assert_eq!(Looks::of(b"hello wo"), Looks::Text);
        assert_eq!(Looks::of("café au".as_bytes()), Looks::Text);
        // A multi-byte character cut by the end of the head is still text.
        assert_eq!(Looks::of(&"ab é".as_bytes()[..4]), Looks::Text);
        assert_eq!(Looks::of(b"abc"), Looks::Bytes, "too short to tell");
        assert_eq!(Looks::of(b"ab\0cdefg"), Looks::Bytes);
        assert_eq!(Looks::of(&5i64.to_le_bytes()), Looks::Bytes);
        assert_eq!(
            Looks::of(b"\x89PNG\r\n\x1a\n").describe(b"\x89PNG\r\n\x1a\n"),
            "it starts with the PNG signature (89 50 4e 47 0d 0a 1a 0a)"
        );
        assert_eq!(
            Looks::Text.describe(b"a\"b\ncdef"),
            r#"it starts with text ("a\"b\ncdef")"#
        );
        assert_eq!(
            Looks::Bytes.describe(&[1, 0xab]),
            "it starts with the bytes 01 ab"
        );
        // No plausible length (below 2^48) is text or has a signature.
        for len in [0u64, 1, 376, 0x0068_5a42, 1 << 20, 1 << 40, (1 << 48) - 1] {
            assert_eq!(Looks::of(&len.to_le_bytes()), Looks::Bytes, "{len}");
        }
    }

    #[test]
    fn messages() {
        let png = b"\x89PNG\r\n\x1a\n";
        let data = ErrorKind::TruncatedData {
            declared: 727_905_341_920_923_785,
            available: 5025,
        };
        assert_eq!(
            not_record_file(png, &data, Basis::Fallback).unwrap(),
            "not a TFRecord or OFRecord file: it starts with the PNG signature \
             (89 50 4e 47 0d 0a 1a 0a); not a TFRecord header, and as an OFRecord header it \
             declares 727905341920923785 bytes, 5025 available"
        );
        // Named or certain framings are never second-guessed.
        assert_eq!(not_record_file(png, &data, Basis::Named), None);
        assert_eq!(not_record_file(png, &data, Basis::Header), None);
        // An assumed framing: only recognisable bytes.
        assert!(not_record_file(png, &data, Basis::Assumed).is_some());
        let bytes = 1i64.to_le_bytes();
        assert_eq!(not_record_file(&bytes, &data, Basis::Assumed), None);
        assert!(not_record_file(&bytes, &data, Basis::Fallback).is_some());
        assert_eq!(
            not_record_file(
                b"hello",
                &ErrorKind::TruncatedHeader {
                    needed: 8,
                    available: 5
                },
                Basis::Fallback
            )
            .unwrap(),
            "not a TFRecord or OFRecord file: it starts with text (\"hello\"); only 5 bytes, \
             fewer than a frame header (12 bytes for TFRecord, 8 for OFRecord)"
        );
        assert_eq!(
            not_record_file(
                &(-2i64).to_le_bytes(),
                &ErrorKind::InvalidLength { length: -2 },
                Basis::Fallback
            )
            .unwrap(),
            "not a TFRecord or OFRecord file: it starts with the bytes fe ff ff ff ff ff ff ff; \
             not a TFRecord header, and as an OFRecord header it declares a negative length (-2)"
        );
        assert_eq!(
            not_record_file(
                b"hello world!",
                &ErrorKind::LengthCrcMismatch {
                    stored: 1,
                    computed: 2
                },
                Basis::Assumed
            )
            .unwrap(),
            "not a TFRecord or OFRecord file: it starts with text (\"hello world!\"); as a \
             TFRecord header, its length CRC does not match (stored 0x00000001, computed \
             0x00000002)"
        );
        // Other kinds are never about the whole file.
        let crc = ErrorKind::DataCrcMismatch {
            stored: 1,
            computed: 2,
        };
        assert_eq!(not_record_file(png, &crc, Basis::Fallback), None);
    }
}
