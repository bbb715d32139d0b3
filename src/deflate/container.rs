//! The GZIP (RFC 1952) and ZLIB (RFC 1950) wrappers of a deflate stream:
//! headers parsed at a byte offset of the whole input, trailers read and
//! checked against checksums the caller keeps while it drains the output.

use std::ops::Range;

/// Length of a GZIP member trailer: CRC-32 and ISIZE, little-endian.
pub const GZIP_TRAILER_LEN: usize = 8;
/// Length of a ZLIB trailer: the Adler-32 of the data, big-endian.
pub const ZLIB_TRAILER_LEN: usize = 4;

/// GZIP header flags (FLG).
const FTEXT: u8 = 1;
const FHCRC: u8 = 2;
const FEXTRA: u8 = 4;
const FNAME: u8 = 8;
const FCOMMENT: u8 = 16;
const RESERVED: u8 = !(FTEXT | FHCRC | FEXTRA | FNAME | FCOMMENT);

/// What is wrong with a GZIP or ZLIB wrapper: the reason of a
/// [`ContainerError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContainerReason {
    /// The input ends inside the header or trailer.
    #[error("input ends inside the header or trailer")]
    Truncated,
    /// Not `1f 8b` (GZIP).
    #[error("not a GZIP member (magic {0:#06x})")]
    BadMagic(u16),
    /// A compression method other than 8 (deflate).
    #[error("compression method {0}, not 8 (deflate)")]
    BadMethod(u8),
    /// GZIP flag bits 5-7 set (zlib: "unknown header flags set").
    #[error("reserved GZIP flags {0:#04x} set")]
    ReservedFlags(u8),
    /// The GZIP header CRC-16 (FHCRC) does not match the header.
    #[error("header CRC {stored:#06x}, computed {computed:#06x}")]
    HeaderCrc {
        /// As written.
        stored: u16,
        /// The low 16 bits of the header's CRC-32.
        computed: u16,
    },
    /// A ZLIB header whose `CMF * 256 + FLG` is not a multiple of 31.
    #[error("ZLIB header {0:#06x} fails its check")]
    ZlibCheck(u16),
    /// A ZLIB window size (CINFO) above 7 (32 KiB).
    #[error("ZLIB window size field {0} above 7")]
    ZlibWindow(u8),
    /// A ZLIB stream that needs a preset dictionary (FDICT).
    #[error("ZLIB stream needs a preset dictionary")]
    ZlibDictionary,
    /// The GZIP trailer's CRC-32 is not the output's.
    #[error("CRC-32 {stored:#010x} in the trailer, {computed:#010x} computed")]
    CrcMismatch {
        /// As written.
        stored: u32,
        /// Of the output.
        computed: u32,
    },
    /// The GZIP trailer's ISIZE is not the output's length mod 2^32.
    #[error("length {stored} in the trailer, {computed} decoded (mod 2^32)")]
    SizeMismatch {
        /// As written.
        stored: u32,
        /// The output's length mod 2^32.
        computed: u32,
    },
    /// The ZLIB trailer's Adler-32 is not the output's.
    #[error("Adler-32 {stored:#010x} in the trailer, {computed:#010x} computed")]
    AdlerMismatch {
        /// As written.
        stored: u32,
        /// Of the output.
        computed: u32,
    },
}

/// A GZIP or ZLIB wrapper error: a [`ContainerReason`] at the absolute byte
/// offset of the header or trailer it was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset}: {reason}")]
pub struct ContainerError {
    /// Byte offset of the header or trailer.
    pub offset: u64,
    /// What is wrong with it.
    pub reason: ContainerReason,
}

fn err(offset: usize, reason: ContainerReason) -> ContainerError {
    ContainerError {
        offset: offset as u64,
        reason,
    }
}

/// The byte where a container trailer starts after a deflate stream that
/// ended at `bit` ([`Progress::End`](super::Progress::End)): the next byte
/// boundary.
pub fn end_byte(bit: u64) -> usize {
    usize::try_from(bit.div_ceil(8)).unwrap_or(usize::MAX)
}

/// A parsed GZIP member header. Byte ranges are absolute, into the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GzipHeader {
    /// Where the header starts.
    pub start: usize,
    /// Where the deflate stream starts (the byte after the header).
    pub deflate_start: usize,
    /// FLG (reserved bits are never set).
    pub flags: u8,
    /// MTIME, seconds since the Unix epoch (0: none).
    pub mtime: u32,
    /// XFL (2: best compression, 4: fastest).
    pub xfl: u8,
    /// OS (255: unknown).
    pub os: u8,
    /// The FEXTRA field's bytes (after XLEN).
    pub extra: Option<Range<usize>>,
    /// The FNAME field (without its terminating zero).
    pub name: Option<Range<usize>>,
    /// The FCOMMENT field (without its terminating zero).
    pub comment: Option<Range<usize>>,
}

/// Parses the GZIP member header at byte `at` of `input`: magic `1f 8b`,
/// method 8, no reserved flag bits, and the optional FEXTRA, FNAME,
/// FCOMMENT and FHCRC fields (the header CRC-16 is checked). These are the
/// checks of zlib's `inflate`; FTEXT, MTIME, XFL and OS are only reported.
pub fn gzip_header(input: &[u8], at: usize) -> Result<GzipHeader, ContainerError> {
    let truncated = || err(at, ContainerReason::Truncated);
    let fixed = input
        .get(at..)
        .and_then(|r| r.first_chunk::<10>())
        .ok_or_else(truncated)?;
    if fixed[..2] != [0x1f, 0x8b] {
        return Err(err(
            at,
            ContainerReason::BadMagic(u16::from_be_bytes([fixed[0], fixed[1]])),
        ));
    }
    if fixed[2] != 8 {
        return Err(err(at, ContainerReason::BadMethod(fixed[2])));
    }
    let flags = fixed[3];
    if flags & RESERVED != 0 {
        return Err(err(at, ContainerReason::ReservedFlags(flags & RESERVED)));
    }
    let mut p = at + 10;
    let mut extra = None;
    if flags & FEXTRA != 0 {
        let xlen = input.get(p..p + 2).ok_or_else(truncated)?;
        let xlen = usize::from(u16::from_le_bytes([xlen[0], xlen[1]]));
        let range = p + 2..p + 2 + xlen;
        input.get(range.clone()).ok_or_else(truncated)?;
        p = range.end;
        extra = Some(range);
    }
    let zero_terminated = |p: &mut usize| -> Result<Range<usize>, ContainerError> {
        let rest = input.get(*p..).ok_or_else(truncated)?;
        let len = rest.iter().position(|&b| b == 0).ok_or_else(truncated)?;
        let range = *p..*p + len;
        *p += len + 1;
        Ok(range)
    };
    let name = (flags & FNAME != 0)
        .then(|| zero_terminated(&mut p))
        .transpose()?;
    let comment = (flags & FCOMMENT != 0)
        .then(|| zero_terminated(&mut p))
        .transpose()?;
    if flags & FHCRC != 0 {
        let stored = input.get(p..p + 2).ok_or_else(truncated)?;
        let stored = u16::from_le_bytes([stored[0], stored[1]]);
        let mut crc = flate2::Crc::new();
        crc.update(&input[at..p]);
        let computed = crc.sum() as u16;
        if stored != computed {
            return Err(err(at, ContainerReason::HeaderCrc { stored, computed }));
        }
        p += 2;
    }
    Ok(GzipHeader {
        start: at,
        deflate_start: p,
        flags,
        mtime: u32::from_le_bytes([fixed[4], fixed[5], fixed[6], fixed[7]]),
        xfl: fixed[8],
        os: fixed[9],
        extra,
        name,
        comment,
    })
}

/// A GZIP member trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GzipTrailer {
    /// Where it starts (the member ends [`GZIP_TRAILER_LEN`] bytes later).
    pub at: usize,
    /// The CRC-32 of the member's output.
    pub crc32: u32,
    /// The member's output length mod 2^32.
    pub isize: u32,
}

/// Reads the 8-byte GZIP trailer at byte `at` (see [`end_byte`]).
pub fn gzip_trailer(input: &[u8], at: usize) -> Result<GzipTrailer, ContainerError> {
    let t = input
        .get(at..)
        .and_then(|r| r.first_chunk::<GZIP_TRAILER_LEN>())
        .ok_or_else(|| err(at, ContainerReason::Truncated))?;
    Ok(GzipTrailer {
        at,
        crc32: u32::from_le_bytes([t[0], t[1], t[2], t[3]]),
        isize: u32::from_le_bytes([t[4], t[5], t[6], t[7]]),
    })
}

impl GzipTrailer {
    /// Checks the trailer against the CRC-32 of the member's whole output,
    /// which the caller updates chunk by chunk ([`flate2::Crc::update`]) as
    /// it drains the output (its `amount` is the length mod 2^32).
    pub fn check(&self, crc: &flate2::Crc) -> Result<(), ContainerError> {
        if crc.sum() != self.crc32 {
            return Err(err(
                self.at,
                ContainerReason::CrcMismatch {
                    stored: self.crc32,
                    computed: crc.sum(),
                },
            ));
        }
        if crc.amount() != self.isize {
            return Err(err(
                self.at,
                ContainerReason::SizeMismatch {
                    stored: self.isize,
                    computed: crc.amount(),
                },
            ));
        }
        Ok(())
    }
}

/// A parsed ZLIB header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZlibHeader {
    /// Where it starts.
    pub start: usize,
    /// Where the deflate stream starts (2 bytes later).
    pub deflate_start: usize,
    /// log2 of the window the compressor used (8..=15).
    pub window_bits: u8,
    /// FLEVEL: 0 fastest .. 3 best compression (informational).
    pub level: u8,
}

/// Parses the 2-byte ZLIB header at byte `at`: method 8, window at most 32
/// KiB, `CMF * 256 + FLG` a multiple of 31, and no preset dictionary (FDICT
/// is rejected: a dictionary is not part of the file).
pub fn zlib_header(input: &[u8], at: usize) -> Result<ZlibHeader, ContainerError> {
    let &[cmf, flg] = input
        .get(at..)
        .and_then(|r| r.first_chunk::<2>())
        .ok_or_else(|| err(at, ContainerReason::Truncated))?;
    let word = u16::from_be_bytes([cmf, flg]);
    if word % 31 != 0 {
        return Err(err(at, ContainerReason::ZlibCheck(word)));
    }
    if cmf & 15 != 8 {
        return Err(err(at, ContainerReason::BadMethod(cmf & 15)));
    }
    if cmf >> 4 > 7 {
        return Err(err(at, ContainerReason::ZlibWindow(cmf >> 4)));
    }
    if flg & 0x20 != 0 {
        return Err(err(at, ContainerReason::ZlibDictionary));
    }
    Ok(ZlibHeader {
        start: at,
        deflate_start: at + 2,
        window_bits: (cmf >> 4) + 8,
        level: flg >> 6,
    })
}

/// A ZLIB trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZlibTrailer {
    /// Where it starts.
    pub at: usize,
    /// The Adler-32 of the output.
    pub adler32: u32,
}

/// Reads the 4-byte ZLIB trailer at byte `at` (see [`end_byte`]).
pub fn zlib_trailer(input: &[u8], at: usize) -> Result<ZlibTrailer, ContainerError> {
    let &t = input
        .get(at..)
        .and_then(|r| r.first_chunk::<ZLIB_TRAILER_LEN>())
        .ok_or_else(|| err(at, ContainerReason::Truncated))?;
    Ok(ZlibTrailer {
        at,
        adler32: u32::from_be_bytes(t),
    })
}

impl ZlibTrailer {
    /// Checks the trailer against the Adler-32 of the whole output.
    pub fn check(&self, adler: &Adler32) -> Result<(), ContainerError> {
        if adler.value() != self.adler32 {
            return Err(err(
                self.at,
                ContainerReason::AdlerMismatch {
                    stored: self.adler32,
                    computed: adler.value(),
                },
            ));
        }
        Ok(())
    }
}

/// A running Adler-32 (RFC 1950 §8.2), updated chunk by chunk. Example:
/// the test `tests::adler32_example` of `deflate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adler32 {
    a: u32,
    b: u32,
}

impl Default for Adler32 {
    fn default() -> Self {
        Adler32::new()
    }
}

impl Adler32 {
    const MOD: u32 = 65521;
    /// The most bytes summed before `b` could overflow a `u32` (zlib's NMAX).
    const NMAX: usize = 5552;

    /// The Adler-32 of nothing (1).
    pub fn new() -> Self {
        Adler32 { a: 1, b: 0 }
    }

    /// Continues with `data`.
    pub fn update(&mut self, data: &[u8]) {
        let (mut a, mut b) = (self.a, self.b);
        for chunk in data.chunks(Self::NMAX) {
            for &byte in chunk {
                a += u32::from(byte);
                b += a;
            }
            a %= Self::MOD;
            b %= Self::MOD;
        }
        self.a = a;
        self.b = b;
    }

    /// The checksum of everything so far.
    pub fn value(&self) -> u32 {
        self.b << 16 | self.a
    }
}
