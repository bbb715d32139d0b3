//! The pure frame parser: one frame at the start of a byte slice.
//!
//! Like `httparse`, the parser borrows from the caller's buffer, never
//! allocates, and answers [`Status::Incomplete`] when the buffer ends inside
//! the frame: that is an answer ("give me more bytes"), not an error. Only the
//! caller knows whether more bytes can come (a stream) or not (a whole file),
//! so only the caller turns it into a `truncated_*` error, with
//! [`Incomplete::error_kind`].

use super::crc::{masked_crc32c, masked_crc32c_u64};
use super::ReadOptions;
use crate::error::ErrorKind;
use crate::names::OptionName;

/// Bytes of a TFRecord header: the u64 length and its masked CRC.
pub const TFRECORD_HEADER_LEN: usize = 12;
/// Bytes after a TFRecord's data: the masked CRC of the data.
pub const TFRECORD_FOOTER_LEN: usize = 4;
/// Bytes of an OFRecord header: the i64 length.
pub const OFRECORD_HEADER_LEN: usize = 8;

/// The framing of a record file (docs/FORMAT.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Framing {
    /// TensorFlow: `u64 length | masked crc32c(length) | data | masked crc32c(data)`.
    TfRecord,
    /// OneFlow: `i64 length | data`, no checksum.
    OfRecord,
}

impl Framing {
    /// The name used on the command line and in index files: `tfrecord` or `ofrecord`.
    pub const fn name(self) -> &'static str {
        match self {
            Framing::TfRecord => "tfrecord",
            Framing::OfRecord => "ofrecord",
        }
    }

    /// Bytes before the data of each frame (12 or 8).
    pub const fn header_len(self) -> usize {
        match self {
            Framing::TfRecord => TFRECORD_HEADER_LEN,
            Framing::OfRecord => OFRECORD_HEADER_LEN,
        }
    }

    /// Bytes after the data of each frame (4 or 0).
    pub const fn footer_len(self) -> usize {
        match self {
            Framing::TfRecord => TFRECORD_FOOTER_LEN,
            Framing::OfRecord => 0,
        }
    }
}

/// `tfrecord` or `ofrecord`.
impl OptionName for Framing {
    const WHAT: &'static str = "framing";
    const ALL: &'static [Self] = &[Framing::TfRecord, Framing::OfRecord];
    fn name(self) -> &'static str {
        Framing::name(self)
    }
}

crate::option_names!(Framing);

/// Whether 12 bytes form a TFRecord header whose length CRC matches.
///
/// This is the test the reader uses to resynchronise after a bad length CRC.
#[inline]
pub fn is_tfrecord_header(header: &[u8; TFRECORD_HEADER_LEN]) -> bool {
    let (length, stored) = split_tfrecord_header(header);
    masked_crc32c_u64(length) == u32::from_le_bytes(stored)
}

/// The first position `i` at which `buf[i..i + 12]` is a TFRecord header with a
/// valid length CRC ([`is_tfrecord_header`]), searching byte by byte.
///
/// Only positions with 12 bytes left are tested: `None` means none of the
/// first `buf.len().saturating_sub(11)` positions holds a header.
pub fn find_tfrecord_header(buf: &[u8]) -> Option<usize> {
    buf.windows(TFRECORD_HEADER_LEN).position(|w| {
        w.first_chunk::<TFRECORD_HEADER_LEN>()
            .is_some_and(is_tfrecord_header)
    })
}

#[inline]
fn split_tfrecord_header(header: &[u8; TFRECORD_HEADER_LEN]) -> ([u8; 8], [u8; 4]) {
    let [l0, l1, l2, l3, l4, l5, l6, l7, c0, c1, c2, c3] = *header;
    ([l0, l1, l2, l3, l4, l5, l6, l7], [c0, c1, c2, c3])
}

/// A frame header that has been read (and, for TFRecord, whose length CRC
/// matched or was not checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The framing the header was read as.
    pub framing: Framing,
    /// The data length it declares (an OFRecord length is known to be ≥ 0).
    pub data_len: u64,
}

impl Header {
    /// Bytes of the header itself (12 or 8).
    pub const fn header_len(&self) -> usize {
        self.framing.header_len()
    }

    /// Bytes the frame declares after its header: the data plus its CRC where
    /// there is one. Saturates at `u64::MAX` for absurd lengths.
    pub const fn declared(&self) -> u64 {
        self.data_len
            .saturating_add(self.framing.footer_len() as u64)
    }

    /// Bytes of the whole frame, header and footer included; `None` when that
    /// does not fit in a u64 (such a frame can never be complete).
    pub const fn frame_len(&self) -> Option<u64> {
        match self.data_len.checked_add(self.framing.footer_len() as u64) {
            Some(after) => after.checked_add(self.framing.header_len() as u64),
            None => None,
        }
    }
}

/// A whole frame at the start of a buffer, its CRCs checked as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The record's data, borrowed from the buffer.
    pub data: &'a [u8],
    /// Bytes before the data (12 or 8): the data starts at `header_len` in the buffer.
    pub header_len: usize,
    /// Bytes of the whole frame: the next frame starts at `len` in the buffer.
    pub len: usize,
}

/// The buffer ends inside a frame: the parser needs more bytes to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incomplete {
    /// The buffer ends inside the header.
    Header {
        /// The framing's header length (12 or 8).
        needed: usize,
        /// Bytes in the buffer.
        available: usize,
    },
    /// The header is complete (and its length CRC good) but the buffer ends
    /// inside the data or its CRC.
    Data {
        /// The header.
        header: Header,
        /// Bytes in the buffer after the header.
        available: usize,
    },
}

impl Incomplete {
    /// Bytes, counted from the start of the frame, that the buffer must hold
    /// before the parser can answer differently. Saturates at `u64::MAX`.
    pub fn needed(&self) -> u64 {
        match *self {
            Incomplete::Header { needed, .. } => needed as u64,
            Incomplete::Data { header, .. } => {
                header.declared().saturating_add(header.header_len() as u64)
            }
        }
    }

    /// The truncation error this is when no more bytes will come:
    /// `truncated_header` or `truncated_data` (docs/FORMAT.md §8.1).
    pub fn error_kind(&self) -> ErrorKind {
        match *self {
            Incomplete::Header { needed, available } => ErrorKind::TruncatedHeader {
                needed: needed as u64,
                available: available as u64,
            },
            Incomplete::Data { header, available } => ErrorKind::TruncatedData {
                declared: header.declared(),
                available: available as u64,
            },
        }
    }
}

/// The answer of [`parse_header`] and [`parse_frame`] when nothing is wrong
/// with the bytes seen so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status<T> {
    /// The whole thing is in the buffer.
    Complete(T),
    /// The buffer ends too early to tell.
    Incomplete(Incomplete),
}

impl<T> Status<T> {
    /// The complete value, if there is one.
    pub fn complete(self) -> Option<T> {
        match self {
            Status::Complete(t) => Some(t),
            Status::Incomplete(_) => None,
        }
    }
}

/// Something wrong inside a frame that no amount of extra bytes can fix.
///
/// It knows nothing of positions; the readers turn it into an
/// [`Error`](crate::Error) with the frame's offset and record id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("[{}]: {}", self.kind().name(), self.kind())]
pub enum FrameError {
    /// A TFRecord length CRC is wrong: the length cannot be trusted, so the
    /// frame's end is unknown.
    LengthCrcMismatch {
        /// The masked CRC stored in the header.
        stored: u32,
        /// The masked CRC of the 8 length bytes.
        computed: u32,
    },
    /// A TFRecord data CRC is wrong; the length was good, so the next frame
    /// starts `frame_len` bytes after this one.
    DataCrcMismatch {
        /// The masked CRC stored after the data.
        stored: u32,
        /// The masked CRC of the data.
        computed: u32,
        /// Bytes of the whole frame.
        frame_len: usize,
    },
    /// An OFRecord length is negative.
    InvalidLength {
        /// The length as written (a signed 64-bit integer).
        length: i64,
    },
}

impl FrameError {
    /// The error kind, with the values involved.
    pub fn kind(&self) -> ErrorKind {
        match *self {
            FrameError::LengthCrcMismatch { stored, computed } => {
                ErrorKind::LengthCrcMismatch { stored, computed }
            }
            FrameError::DataCrcMismatch {
                stored, computed, ..
            } => ErrorKind::DataCrcMismatch { stored, computed },
            FrameError::InvalidLength { length } => ErrorKind::InvalidLength { length },
        }
    }

    /// Bytes of the damaged frame when its end is known (a bad data CRC).
    pub fn frame_len(&self) -> Option<usize> {
        match *self {
            FrameError::DataCrcMismatch { frame_len, .. } => Some(frame_len),
            _ => None,
        }
    }
}

/// Reads the frame header at the start of `buf`.
///
/// For TFRecord the length CRC is checked (when `check_length_crc`) before the
/// length is returned; for OFRecord a negative length is an error.
///
/// ```
/// use recordwire::frame::{parse_header, tfrecord_frame, Framing, Status};
///
/// let frame = tfrecord_frame(b"abc");
/// let Status::Complete(header) = parse_header(&frame, Framing::TfRecord, true)? else {
///     unreachable!()
/// };
/// assert_eq!(header.data_len, 3);
/// assert_eq!(header.frame_len(), Some(12 + 3 + 4));
/// # Ok::<(), recordwire::frame::FrameError>(())
/// ```
pub fn parse_header(
    buf: &[u8],
    framing: Framing,
    check_length_crc: bool,
) -> Result<Status<Header>, FrameError> {
    let incomplete = Status::Incomplete(Incomplete::Header {
        needed: framing.header_len(),
        available: buf.len(),
    });
    let data_len = match framing {
        Framing::TfRecord => {
            let Some(header) = buf.first_chunk::<TFRECORD_HEADER_LEN>() else {
                return Ok(incomplete);
            };
            let (length, stored) = split_tfrecord_header(header);
            if check_length_crc {
                let stored = u32::from_le_bytes(stored);
                let computed = masked_crc32c_u64(length);
                if stored != computed {
                    return Err(FrameError::LengthCrcMismatch { stored, computed });
                }
            }
            u64::from_le_bytes(length)
        }
        Framing::OfRecord => {
            let Some(&header) = buf.first_chunk::<OFRECORD_HEADER_LEN>() else {
                return Ok(incomplete);
            };
            let length = i64::from_le_bytes(header);
            match u64::try_from(length) {
                Ok(len) => len,
                Err(_) => return Err(FrameError::InvalidLength { length }),
            }
        }
    };
    Ok(Status::Complete(Header { framing, data_len }))
}

/// Reads the whole frame at the start of `buf`, checking the CRCs that `opts`
/// asks for (its policy is not used here).
///
/// Nothing is allocated and nothing is sliced before the declared length has
/// been checked against the bytes that are really in `buf`.
///
/// ```
/// use recordwire::frame::{parse_frame, tfrecord_frame, Framing, Incomplete, ReadOptions, Status};
///
/// let file = tfrecord_frame(b"abc");
/// let opts = ReadOptions::default();
/// let Status::Complete(frame) = parse_frame(&file, Framing::TfRecord, &opts)? else {
///     unreachable!()
/// };
/// assert_eq!(frame.data, b"abc");
/// assert_eq!(frame.len, file.len());
///
/// // Two bytes short: "incomplete, the frame needs 19 bytes in all".
/// match parse_frame(&file[..17], Framing::TfRecord, &opts)? {
///     Status::Incomplete(more) => assert_eq!(more.needed(), 19),
///     Status::Complete(_) => unreachable!(),
/// }
/// # Ok::<(), recordwire::frame::FrameError>(())
/// ```
pub fn parse_frame<'a>(
    buf: &'a [u8],
    framing: Framing,
    opts: &ReadOptions,
) -> Result<Status<Frame<'a>>, FrameError> {
    let header = match parse_header(buf, framing, opts.check_length_crc)? {
        Status::Complete(header) => header,
        Status::Incomplete(more) => return Ok(Status::Incomplete(more)),
    };
    let header_len = framing.header_len();
    let rest = buf.get(header_len..).unwrap_or_default();
    let incomplete = Status::Incomplete(Incomplete::Data {
        header,
        available: rest.len(),
    });
    // Check the declared length against what is really there before slicing.
    let Ok(data_len) = usize::try_from(header.data_len) else {
        return Ok(incomplete);
    };
    let after_header = match data_len.checked_add(framing.footer_len()) {
        Some(n) if n <= rest.len() => n,
        _ => return Ok(incomplete),
    };
    let (data, footer) = rest.split_at(data_len);
    // `after_header <= rest.len() == buf.len() - header_len`, so this cannot overflow.
    let len = header_len + after_header;
    // Read the next frame's first byte now, so that its cache line is on its
    // way while the data CRC runs: each header depends on the one before, so
    // small records otherwise wait for memory once per frame. (A plain load
    // kept by `black_box`: a prefetch instruction needs `unsafe`.)
    if let Some(&next) = buf.get(len) {
        std::hint::black_box(next);
    }
    if framing == Framing::TfRecord && opts.check_data_crc {
        if let Some(&stored) = footer.first_chunk::<TFRECORD_FOOTER_LEN>() {
            let stored = u32::from_le_bytes(stored);
            let computed = masked_crc32c(data);
            if stored != computed {
                return Err(FrameError::DataCrcMismatch {
                    stored,
                    computed,
                    frame_len: len,
                });
            }
        }
    }
    Ok(Status::Complete(Frame {
        data,
        header_len,
        len,
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::frame::{ofrecord_frame, tfrecord_frame};

    const OPTS: ReadOptions = ReadOptions {
        check_length_crc: true,
        check_data_crc: true,
        policy: crate::frame::ErrorPolicy::Fail,
        skip_pads: true,
    };

    #[test]
    fn framing_names() {
        for f in [Framing::TfRecord, Framing::OfRecord] {
            assert_eq!(f.name().parse::<Framing>(), Ok(f));
            assert_eq!(f.to_string(), f.name());
        }
        assert_eq!(
            "auto".parse::<Framing>().unwrap_err().to_string(),
            "unknown framing `auto` (expected one of: tfrecord, ofrecord)"
        );
    }

    #[test]
    fn header_incomplete() {
        let frame = tfrecord_frame(b"abc");
        for n in 0..12 {
            assert_eq!(
                parse_header(&frame[..n], Framing::TfRecord, true),
                Ok(Status::Incomplete(Incomplete::Header {
                    needed: 12,
                    available: n
                }))
            );
        }
        let frame = ofrecord_frame(b"abc");
        assert_eq!(
            parse_frame(&frame[..7], Framing::OfRecord, &OPTS),
            Ok(Status::Incomplete(Incomplete::Header {
                needed: 8,
                available: 7
            }))
        );
    }

    #[test]
    fn frame_incomplete_data() {
        let frame = tfrecord_frame(b"abcdef");
        let header = Header {
            framing: Framing::TfRecord,
            data_len: 6,
        };
        for n in 12..frame.len() {
            let status = parse_frame(&frame[..n], Framing::TfRecord, &OPTS);
            let more = Incomplete::Data {
                header,
                available: n - 12,
            };
            assert_eq!(status, Ok(Status::Incomplete(more)));
            assert_eq!(more.needed(), 22);
            assert_eq!(
                more.error_kind(),
                ErrorKind::TruncatedData {
                    declared: 10,
                    available: (n - 12) as u64
                }
            );
        }
        let status = parse_frame(&frame, Framing::TfRecord, &OPTS);
        assert_eq!(
            status,
            Ok(Status::Complete(Frame {
                data: b"abcdef",
                header_len: 12,
                len: 22
            }))
        );
    }

    #[test]
    fn huge_lengths_are_incomplete_not_panics() {
        for len in [u64::MAX, u64::MAX - 3, u64::MAX - 4, 1 << 40] {
            let mut buf = len.to_le_bytes().to_vec();
            buf.extend_from_slice(&masked_crc32c(&len.to_le_bytes()).to_le_bytes());
            buf.extend_from_slice(&[0; 32]);
            let Ok(Status::Incomplete(more)) = parse_frame(&buf, Framing::TfRecord, &OPTS) else {
                panic!("expected incomplete for {len}");
            };
            assert_eq!(more.needed(), len.saturating_add(16));
            let header = Header {
                framing: Framing::TfRecord,
                data_len: len,
            };
            assert_eq!(header.frame_len(), len.checked_add(16));
        }
        let buf = i64::MAX.to_le_bytes();
        let Ok(Status::Incomplete(more)) = parse_frame(&buf, Framing::OfRecord, &OPTS) else {
            panic!("expected incomplete");
        };
        assert_eq!(more.needed(), i64::MAX as u64 + 8);
    }

    #[test]
    fn crc_errors() {
        let mut frame = tfrecord_frame(b"abc");
        frame[15] ^= 0xff; // the data CRC
        let stored = u32::from_le_bytes([frame[15], frame[16], frame[17], frame[18]]);
        assert_eq!(
            parse_frame(&frame, Framing::TfRecord, &OPTS),
            Err(FrameError::DataCrcMismatch {
                stored,
                computed: masked_crc32c(b"abc"),
                frame_len: 19
            })
        );
        let unchecked = OPTS.with_data_crc(false);
        assert!(matches!(
            parse_frame(&frame, Framing::TfRecord, &unchecked),
            Ok(Status::Complete(Frame { data: b"abc", .. }))
        ));

        let mut frame = tfrecord_frame(b"abc");
        frame[0] = 200; // the length, whose CRC no longer matches
        let err = parse_frame(&frame, Framing::TfRecord, &OPTS).unwrap_err();
        assert_eq!(
            err,
            FrameError::LengthCrcMismatch {
                stored: masked_crc32c(&3u64.to_le_bytes()),
                computed: masked_crc32c(&200u64.to_le_bytes()),
            }
        );
        assert_eq!(err.frame_len(), None);
        assert_eq!(err.kind().name(), "length_crc_mismatch");
        // Unchecked: the damaged length is believed.
        let unchecked = OPTS.with_length_crc(false);
        assert!(matches!(
            parse_frame(&frame, Framing::TfRecord, &unchecked),
            Ok(Status::Incomplete(Incomplete::Data { .. }))
        ));
    }

    #[test]
    fn negative_ofrecord_length() {
        let mut buf = (-2i64).to_le_bytes().to_vec();
        buf.extend_from_slice(b"xx");
        assert_eq!(
            parse_frame(&buf, Framing::OfRecord, &OPTS),
            Err(FrameError::InvalidLength { length: -2 })
        );
        assert_eq!(
            FrameError::InvalidLength { length: -2 }.to_string(),
            "[invalid_length]: negative length -2"
        );
    }

    #[test]
    fn find_header() {
        let mut buf = vec![0xaa; 5];
        buf.extend_from_slice(&tfrecord_frame(b"xyz"));
        assert_eq!(find_tfrecord_header(&buf), Some(5));
        assert_eq!(find_tfrecord_header(&buf[..17]), Some(5));
        assert_eq!(find_tfrecord_header(&buf[..16]), None);
        assert_eq!(find_tfrecord_header(&buf[6..]), None);
        assert_eq!(find_tfrecord_header(b""), None);
    }
}
