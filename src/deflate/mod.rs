//! A raw DEFLATE (RFC 1951) decoder built for random access, and the GZIP
//! (RFC 1952) and ZLIB (RFC 1950) container pieces around it.
//!
//! The whole compressed input is one slice (a memory map), addressed by
//! absolute **bit position** (`byte * 8 + bit`, bits taken LSB-first as
//! DEFLATE reads them). [`Inflate`] decodes from any block start into the
//! caller's `Vec<u8>`, and can stop at every block boundary so that an
//! indexer records checkpoints the way zlib's `examples/zran.c` does: the bit
//! where a block starts and the (up to) 32 KiB of output before it. Seeding
//! `out` with that window and starting an [`Inflate::at`] that bit resumes
//! the stream there. It holds no `unsafe`.
//!
//! miniz_oxide (flate2's backend) can do the same since 0.8.6, in safe Rust,
//! with its `block-boundary` feature (`TINFL_FLAG_STOP_ON_BLOCK_BOUNDARY`,
//! `DecompressorOxide::block_boundary_state` and `from_block_boundary_state`).
//! The tests run it as this decoder's twin: both must stop at the same
//! boundaries (bit and output length) and give the same output when
//! restarted from each. This decoder stays for now: it takes the whole
//! input as one slice at an absolute bit (a checkpoint is a `u64`, where
//! miniz_oxide resumes from a byte plus the bits left of it), and it is
//! about as fast. Stopping at every block boundary, `examples/inflate_bench.rs`
//! measured it at 0.98–1.18× miniz_oxide's throughput on BERT-like records
//! (levels 1, 6, 9), 1.12–1.35× on generated text and 0.82–1.10× on two real
//! TFRecord files, medians of CPU time on a shared machine (about ±10%);
//! miniz_oxide executes 4–16% fewer instructions on the BERT-like and real
//! files (BENCHMARKS.md, "Random access into GZIP/ZLIB files").
//!
//! The pieces compose; nothing here walks a whole file on its own:
//! [`gzip_header`] (or [`zlib_header`]) gives the byte where the deflate data
//! starts, [`Inflate`] decodes it to [`Progress::End`], [`end_byte`] rounds
//! that bit up to the trailer, and
//! [`GzipTrailer::check`](container::GzipTrailer::check) (or [`Adler32`]
//! against [`zlib_trailer`]) checks the output's checksum, which the caller
//! updates chunk by chunk as it drains the output.
//!
//! The test `tests::checkpoints_and_restart` is that loop, written out: a GZIP
//! member decoded with a checkpoint at every block, its trailer checked, and
//! a restart from the last checkpoint.

mod container;
mod huffman;
mod inflate;

pub use container::{
    end_byte, gzip_header, gzip_trailer, zlib_header, zlib_trailer, Adler32, GZIP_TRAILER_LEN,
    ZLIB_TRAILER_LEN,
};
pub(crate) use container::{ContainerError, ContainerReason};
pub use inflate::Inflate;

/// The DEFLATE window: the farthest a back-reference reaches (32 KiB), so
/// the output a checkpoint must keep.
pub const WINDOW: usize = 32 * 1024;

/// Where [`Inflate::run`] stopped, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// At the start of a block (asked for with `stop_at_blocks`): `bit` is
    /// where its header starts, and the output so far is everything before
    /// it. The block before was not the last one (that ends in
    /// [`Progress::End`]). The next call decodes the block.
    Block {
        /// The bit position of the block header.
        bit: u64,
    },
    /// The output reached the limit (it may exceed it by one match, at most
    /// 258 bytes); call again to go on.
    Limit,
    /// The final block has ended; `bit` is just after its end-of-block code
    /// (see [`end_byte`] for the trailer). Calling again returns this again.
    End {
        /// The bit position after the last code of the stream.
        bit: u64,
    },
}

/// Which of the three Huffman codes of a block is meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeKind {
    /// The code-length code of a dynamic block header (19 symbols).
    CodeLength,
    /// The literal/length code.
    LiteralLength,
    /// The distance code.
    Distance,
}

impl std::fmt::Display for CodeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CodeKind::CodeLength => "code-length",
            CodeKind::LiteralLength => "literal/length",
            CodeKind::Distance => "distance",
        })
    }
}

/// What is wrong in a deflate stream: the reason of an [`InflateError`].
///
/// The decoder accepts and rejects what zlib's `inflate` does (without a
/// preset dictionary, and without `INFLATE_ALLOW_INVALID_DISTANCE_TOOFAR_ARRR`);
/// the one difference is *when* a hopeless stream fails (see
/// [`IncompleteCode`](InflateReason::IncompleteCode)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InflateReason {
    /// The input ends inside the stream (before its final block's
    /// end-of-block code), or the start bit is past its end.
    #[error("input ends inside the deflate stream")]
    Truncated,
    /// Block type 3 (reserved).
    #[error("invalid block type 3")]
    BadBlockType,
    /// A stored block whose NLEN is not the one's complement of LEN.
    #[error("stored block length {len:#06x} does not match its complement {nlen:#06x}")]
    BadStoredLength {
        /// LEN as written.
        len: u16,
        /// NLEN as written.
        nlen: u16,
    },
    /// A dynamic block declaring more than 286 literal/length or more than
    /// 30 distance codes (zlib's "too many length or distance symbols";
    /// RFC 1951 allows the header field to say 288 and 32, but symbols
    /// 286-287 and 30-31 never occur in valid data).
    #[error("{litlen} literal/length and {dist} distance codes, more than 286 and 30")]
    TooManySymbols {
        /// HLIT + 257.
        litlen: u16,
        /// HDIST + 1.
        dist: u16,
    },
    /// Code lengths that give some prefix more codes than it can hold.
    #[error("over-subscribed {0} code")]
    OversubscribedCode(CodeKind),
    /// Code lengths that leave codes unused. Like zlib, only a
    /// literal/length or distance code whose one code has length 1, and a
    /// distance code with no codes at all, are accepted (a missing code then
    /// fails when read, as [`InvalidSymbol`](InflateReason::InvalidSymbol)).
    /// An empty code-length code is rejected here; zlib accepts it and fails
    /// later, on the missing end-of-block code.
    #[error("incomplete {0} code")]
    IncompleteCode(CodeKind),
    /// Code length 16 (repeat the previous length) as the first length.
    #[error("code length repeat with no previous length")]
    RepeatWithoutLength,
    /// Code lengths (or a repeat) running past HLIT + HDIST.
    #[error("more code lengths than the header declares")]
    TooManyLengths,
    /// A dynamic block whose literal/length code has no end-of-block code
    /// (symbol 256 has length 0).
    #[error("no end-of-block code")]
    MissingEndOfBlock,
    /// A code that stands for no symbol: literal/length 286 or 287 or
    /// distance 30 or 31 (fixed code), or a code missing from an incomplete
    /// code, or any distance when the block has no distance code.
    #[error("invalid {0} code")]
    InvalidSymbol(CodeKind),
    /// A match reaching back before the start of the output (plus the
    /// seeded window).
    #[error("distance {distance} reaches back beyond the {available} bytes of output")]
    DistanceTooFar {
        /// The match distance.
        distance: u32,
        /// The bytes in the output before the match.
        available: u64,
    },
}

/// A deflate decoding error: an [`InflateReason`] at an absolute bit
/// position of the input (`byte * 8 + bit`).
///
/// The position is where the offending part starts: the block header (bad
/// type, too many symbols), the stored block's LEN, the code that does not
/// decode, the code length, the match's distance code; for
/// [`Truncated`](InflateReason::Truncated), the end of the input. Code
/// errors found while building a table are at the end of the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("deflate stream at bit {bit} (byte {}): {reason}", bit / 8)]
pub struct InflateError {
    /// Absolute bit position in the input.
    pub bit: u64,
    /// What is wrong there.
    pub reason: InflateReason,
}

#[cfg(test)]
mod tests;
