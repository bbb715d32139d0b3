//! [`Inflate`]: the block decoder, over one input slice at absolute bit
//! positions.
//!
//! The bit reader keeps 56 to 63 bits in a `u64`, refilled by one
//! little-endian word load while 8 input bytes remain (each refill is enough
//! for a whole literal/length + distance pair, at most 48 bits). Near the end
//! it reads zeros past the input; a decode that *uses* them is caught at the
//! next refill and before returning, and reported as
//! [`InflateReason::Truncated`] (libdeflate's technique), so the hot loop
//! checks no input bound.
//!
//! Output is written into `out` grown ahead with [`SLACK`] spare bytes, so
//! that a match is copied 8 bytes at a time and may write past its end.

use super::huffman::{
    self, CODELEN_BITS, CODELEN_ENOUGH, DIST_BITS, DIST_ENOUGH, END, INVALID, LITERAL, LITLEN_BITS,
    LITLEN_ENOUGH, SUB,
};
use super::{CodeKind, InflateError, InflateReason, Progress};

/// Spare bytes kept after the decode limit inside `out`: one longest match
/// (258) plus an 8-byte copy's overshoot, rounded up.
const SLACK: usize = 512;
/// What `out` grows by at once (plus [`SLACK`]) when the decode needs room.
/// A fixed step, not a share of what `out` already holds: `run` truncates
/// `out` to the output when it returns, so the zero-filled room past it is
/// filled again by the next call, and with a step proportional to the
/// output a caller stopping at every block (with no limit) re-zeroed the
/// whole output at each block. With a fixed step each call zero-fills what
/// it decodes plus at most one step; `Vec` still doubles its capacity, so
/// reallocation stays amortised.
const GROW_STEP: usize = 64 * 1024;
/// The order of the code-length code lengths in a dynamic header.
const CODELEN_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// The bit reader: `n` valid bits in `buf` (LSB first), `pos` the next
/// input byte not yet (wholly) in it. Bits of `buf` above `n` are either zero
/// or the input's own bits from `pos` on, so OR-ing a reload is harmless.
#[derive(Clone, Copy)]
struct Bits<'a> {
    input: &'a [u8],
    pos: usize,
    buf: u64,
    n: u32,
}

impl<'a> Bits<'a> {
    /// A reader at `bit`, or `None` when that is past the end of `input`.
    fn new(input: &'a [u8], bit: u64) -> Option<Self> {
        let byte = usize::try_from(bit / 8).ok()?;
        if bit > input.len() as u64 * 8 {
            return None;
        }
        let mut b = Bits {
            input,
            pos: byte,
            buf: 0,
            n: 0,
        };
        b.refill();
        b.consume((bit % 8) as u32);
        Some(b)
    }

    /// The absolute bit position of the next unread bit.
    #[inline]
    fn position(&self) -> u64 {
        self.pos as u64 * 8 - u64::from(self.n)
    }

    /// Whether bits past the end of the input have been consumed.
    #[inline]
    fn overread(&self) -> bool {
        self.position() > self.input.len() as u64 * 8
    }

    /// Brings `n` to 56 or more; `false` when the reader has already
    /// consumed bits past the end of the input.
    #[inline(always)]
    fn refill(&mut self) -> bool {
        if let Some(word) = self
            .input
            .get(self.pos..)
            .and_then(|rest| rest.first_chunk::<8>())
        {
            self.buf |= u64::from_le_bytes(*word) << self.n;
            self.pos += (63 - self.n as usize) >> 3;
            self.n |= 56;
            true
        } else {
            self.refill_slow()
        }
    }

    /// Byte by byte near the end, with zeros past it.
    #[inline(never)]
    fn refill_slow(&mut self) -> bool {
        if self.overread() {
            return false;
        }
        while self.n < 56 {
            let byte = self.input.get(self.pos).copied().unwrap_or(0);
            self.buf |= u64::from(byte) << self.n;
            self.pos += 1;
            self.n += 8;
        }
        true
    }

    /// Drops `k` bits (`k <= n`).
    #[inline(always)]
    fn consume(&mut self, k: u32) {
        self.buf >>= k;
        self.n -= k;
    }

    /// Takes `k <= 16` bits; only after a refill with room for them.
    #[inline]
    fn take(&mut self, k: u32) -> u32 {
        let v = (self.buf & ((1 << k) - 1)) as u32;
        self.consume(k);
        v
    }

    /// Refills, or fails as truncated at the end of the input.
    #[inline]
    fn need(&mut self) -> Result<(), InflateError> {
        if self.refill() {
            Ok(())
        } else {
            Err(self.truncated())
        }
    }

    fn truncated(&self) -> InflateError {
        InflateError {
            bit: self.input.len() as u64 * 8,
            reason: InflateReason::Truncated,
        }
    }

    fn error(&self, reason: InflateReason) -> InflateError {
        InflateError {
            bit: self.position(),
            reason,
        }
    }

    /// The error of a code (and extra bits) of `used` bits at the current
    /// position, found before consuming it: truncated when some of those
    /// bits are past the end of the input (zlib would wait for them).
    #[cold]
    fn error_using(&self, reason: InflateReason, used: u32) -> InflateError {
        if self.position() + u64::from(used) > self.input.len() as u64 * 8 {
            self.truncated()
        } else {
            self.error(reason)
        }
    }
}

/// The decoding tables, allocated once per [`Inflate`] and rebuilt in place
/// for each block.
struct Tables {
    litlen: [u32; LITLEN_ENOUGH],
    dist: [u32; DIST_ENOUGH],
    codelen: [u32; CODELEN_ENOUGH],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before a block header; `reported` once it was returned as
    /// [`Progress::Block`] (or is where decoding started).
    Header { reported: bool },
    /// Inside a stored block, with this many bytes still to copy.
    Stored { remaining: usize },
    /// Inside a Huffman block whose codes are in the tables.
    Huffman,
    /// After the final block.
    Done,
    /// After an error, which every later call returns again.
    Failed(InflateError),
}

/// A raw DEFLATE decoder over one whole input slice, resumable at any block
/// start and at any point where it returned.
///
/// It holds the bit position, where it is in the block structure (between
/// blocks, in a stored block, in a Huffman block) and that block's tables
/// (about 11 KiB, allocated once by [`Inflate::at`] and reused for every
/// block). The input is passed to each [`run`](Inflate::run) again and must
/// be the same slice (or a longer one with the same start) each time.
///
/// What it accepts and rejects is zlib's `inflate` (see [`InflateReason`]).
/// After an error it stays failed: every later call returns the same error.
pub struct Inflate {
    bit: u64,
    state: State,
    /// The current block has BFINAL set.
    last: bool,
    tables: Box<Tables>,
    /// The tables hold the fixed code (consecutive fixed blocks reuse them).
    fixed: bool,
}

impl std::fmt::Debug for Inflate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inflate")
            .field("bit", &self.bit)
            .field("state", &self.state)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl Inflate {
    /// A decoder of the raw deflate stream whose (first) block header starts
    /// at `bit` of the input: the start of the stream, or a block start an
    /// earlier run returned as [`Progress::Block`]. Anything else decodes
    /// garbage or fails.
    pub fn at(bit: u64) -> Self {
        Inflate {
            bit,
            state: State::Header { reported: true },
            last: false,
            tables: Box::new(Tables {
                litlen: [0; LITLEN_ENOUGH],
                dist: [0; DIST_ENOUGH],
                codelen: [0; CODELEN_ENOUGH],
            }),
            fixed: false,
        }
    }

    /// The bit position the decoder is at: where the next call goes on (after
    /// [`Progress::End`], just after the stream; after an error, where the
    /// failed call started).
    pub fn bit(&self) -> u64 {
        self.bit
    }

    /// Decodes from `input` (the whole compressed input, the same slice at
    /// every call), appending to `out`.
    ///
    /// Back-references may reach into everything already in `out`: seed it
    /// with the window before a checkpoint (up to [`WINDOW`](super::WINDOW)
    /// bytes) when restarting there, and when draining output between calls
    /// keep at least the last `WINDOW` bytes. A distance beyond `out.len()`
    /// is an error. It returns
    /// - [`Progress::Block`] at the start of every block after the first,
    ///   when `stop_at_blocks` is set (before reading its header);
    /// - [`Progress::Limit`] once `out.len() >= out_limit`, checked between
    ///   symbols (a match may overshoot by up to 258 bytes; a stored block
    ///   stops exactly there);
    /// - [`Progress::End`] when the final block has ended.
    ///
    /// On an error, `out` holds what was decoded before it was found (for a
    /// truncated stream this may include up to one match decoded from the
    /// missing bits); drop it.
    pub fn run(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        out_limit: usize,
        stop_at_blocks: bool,
    ) -> Result<Progress, InflateError> {
        self.run_window(input, 0, out, out_limit, stop_at_blocks)
    }

    /// [`run`](Inflate::run) over a window of the compressed input: `input`
    /// holds its bytes from byte `base` on (a ranged read of a file that is
    /// not in memory). Bit positions, in and out, stay those of the whole
    /// input. The window must start at or before the decoder's position;
    /// running past its end is [`InflateReason::Truncated`] at the window's
    /// end, as for a truncated input (the caller, who knows where the input
    /// really ends, tells the two apart).
    pub fn run_window(
        &mut self,
        input: &[u8],
        base: u64,
        out: &mut Vec<u8>,
        out_limit: usize,
        stop_at_blocks: bool,
    ) -> Result<Progress, InflateError> {
        match self.state {
            State::Failed(e) => return Err(e),
            State::Done => return Ok(Progress::End { bit: self.bit }),
            _ => {}
        }
        let base_bit = base * 8;
        let window_end = base_bit + input.len() as u64 * 8;
        let start = self.bit.checked_sub(base_bit);
        let Some(mut bits) = start.and_then(|bit| Bits::new(input, bit)) else {
            let e = InflateError {
                bit: window_end,
                reason: InflateReason::Truncated,
            };
            self.state = State::Failed(e);
            return Err(e);
        };
        let mut o = out.len();
        let result = self.blocks(&mut bits, out, &mut o, out_limit, stop_at_blocks);
        out.truncate(o);
        let result = match result {
            _ if bits.overread() => Err(bits.truncated()),
            r => r,
        };
        match result {
            Ok(progress) => {
                self.bit = base_bit + bits.position();
                let progress = match progress {
                    Progress::Block { bit } => Progress::Block {
                        bit: base_bit + bit,
                    },
                    Progress::End { bit } => {
                        self.state = State::Done;
                        Progress::End {
                            bit: base_bit + bit,
                        }
                    }
                    Progress::Limit => Progress::Limit,
                };
                Ok(progress)
            }
            Err(e) => {
                let e = InflateError {
                    bit: base_bit + e.bit,
                    ..e
                };
                self.state = State::Failed(e);
                Err(e)
            }
        }
    }

    /// The block loop of [`run`](Inflate::run); `out[..*o]` is the output,
    /// the rest of `out` spare room.
    fn blocks(
        &mut self,
        bits: &mut Bits<'_>,
        out: &mut Vec<u8>,
        o: &mut usize,
        out_limit: usize,
        stop_at_blocks: bool,
    ) -> Result<Progress, InflateError> {
        loop {
            match self.state {
                State::Header { reported } => {
                    if stop_at_blocks && !reported {
                        self.state = State::Header { reported: true };
                        return Ok(Progress::Block {
                            bit: bits.position(),
                        });
                    }
                    self.header(bits)?;
                }
                State::Stored { remaining } => {
                    if *o >= out_limit {
                        return Ok(Progress::Limit);
                    }
                    // Byte-aligned here, and within the input (a reader).
                    let at = (bits.position() / 8) as usize;
                    let available = bits.input.len().saturating_sub(at);
                    let n = remaining.min(out_limit - *o).min(available);
                    // Into the spare room, or appended (without the
                    // zero-fill of `grow`): `out` never shrinks within a
                    // call, so no byte is zero-filled twice.
                    let data = &bits.input[at..at + n];
                    if out.len() >= *o + n {
                        out[*o..*o + n].copy_from_slice(data);
                    } else {
                        out.truncate(*o);
                        out.extend_from_slice(data);
                    }
                    *o += n;
                    *bits = Bits::new(bits.input, (at + n) as u64 * 8)
                        .ok_or_else(|| bits.truncated())?;
                    if n == remaining {
                        if let Some(p) = self.end_block(bits) {
                            return Ok(p);
                        }
                    } else if n == available {
                        return Err(bits.truncated());
                    } else {
                        self.state = State::Stored {
                            remaining: remaining - n,
                        };
                    }
                }
                State::Huffman => {
                    if self.huffman(bits, out, o, out_limit)? {
                        if let Some(p) = self.end_block(bits) {
                            return Ok(p);
                        }
                    } else {
                        return Ok(Progress::Limit);
                    }
                }
                State::Done => {
                    return Ok(Progress::End {
                        bit: bits.position(),
                    })
                }
                State::Failed(e) => return Err(e),
            }
        }
    }

    /// After a block's end: the end of the stream, or the next header.
    fn end_block(&mut self, bits: &Bits<'_>) -> Option<Progress> {
        if self.last {
            self.state = State::Done;
            Some(Progress::End {
                bit: bits.position(),
            })
        } else {
            self.state = State::Header { reported: false };
            None
        }
    }

    /// Reads a block header (and a dynamic block's code description).
    fn header(&mut self, bits: &mut Bits<'_>) -> Result<(), InflateError> {
        let start = bits.position();
        bits.need()?;
        self.last = bits.take(1) == 1;
        match bits.take(2) {
            0 => {
                // Stored: skip to the byte boundary, then LEN and NLEN.
                let at = bits.position().div_ceil(8);
                let at = usize::try_from(at).map_err(|_| bits.truncated())?;
                let Some(&[l0, l1, n0, n1]) = bits.input.get(at..).and_then(|r| r.first_chunk())
                else {
                    return Err(bits.truncated());
                };
                let (len, nlen) = (u16::from_le_bytes([l0, l1]), u16::from_le_bytes([n0, n1]));
                if len != !nlen {
                    return Err(InflateError {
                        bit: at as u64 * 8,
                        reason: InflateReason::BadStoredLength { len, nlen },
                    });
                }
                *bits =
                    Bits::new(bits.input, (at + 4) as u64 * 8).ok_or_else(|| bits.truncated())?;
                self.state = State::Stored {
                    remaining: usize::from(len),
                };
            }
            1 => {
                if !self.fixed {
                    let t = &mut *self.tables;
                    let lens = huffman::fixed_litlen_lengths();
                    huffman::build(&mut t.litlen, LITLEN_BITS, &lens, CodeKind::LiteralLength)
                        .map_err(|r| bits.error(r))?;
                    huffman::build(&mut t.dist, DIST_BITS, &[5; 32], CodeKind::Distance)
                        .map_err(|r| bits.error(r))?;
                    self.fixed = true;
                }
                self.state = State::Huffman;
            }
            2 => {
                self.fixed = false;
                self.dynamic(bits, start)?;
                self.state = State::Huffman;
            }
            _ => {
                return Err(InflateError {
                    bit: start,
                    reason: InflateReason::BadBlockType,
                })
            }
        }
        Ok(())
    }

    /// Reads a dynamic block's code description (RFC 1951 §3.2.7) and builds
    /// its tables.
    fn dynamic(&mut self, bits: &mut Bits<'_>, start: u64) -> Result<(), InflateError> {
        bits.need()?;
        let nlit = bits.take(5) as usize + 257;
        let ndist = bits.take(5) as usize + 1;
        let nclen = bits.take(4) as usize + 4;
        if nlit > 286 || ndist > 30 {
            return Err(InflateError {
                bit: start,
                reason: InflateReason::TooManySymbols {
                    litlen: nlit as u16,
                    dist: ndist as u16,
                },
            });
        }
        let t = &mut *self.tables;
        let mut cl_lens = [0u8; 19];
        for &sym in &CODELEN_ORDER[..nclen] {
            bits.need()?;
            cl_lens[sym] = bits.take(3) as u8;
        }
        huffman::build(&mut t.codelen, CODELEN_BITS, &cl_lens, CodeKind::CodeLength)
            .map_err(|r| bits.error(r))?;

        let total = nlit + ndist;
        let mut lens = [0u8; 286 + 30];
        let mut i = 0;
        while i < total {
            bits.need()?;
            let here = bits.position();
            let e = t.codelen[(bits.buf & ((1 << CODELEN_BITS) - 1)) as usize];
            bits.consume(e & 15);
            let sym = (e >> 16) as u8;
            let (value, repeat) = match sym {
                0..=15 => {
                    lens[i] = sym;
                    i += 1;
                    continue;
                }
                16 => {
                    let Some(&prev) = i.checked_sub(1).and_then(|p| lens.get(p)) else {
                        return Err(InflateError {
                            bit: here,
                            reason: InflateReason::RepeatWithoutLength,
                        });
                    };
                    (prev, 3 + bits.take(2) as usize)
                }
                17 => (0, 3 + bits.take(3) as usize),
                _ => (0, 11 + bits.take(7) as usize),
            };
            if i + repeat > total {
                return Err(InflateError {
                    bit: here,
                    reason: InflateReason::TooManyLengths,
                });
            }
            lens[i..i + repeat].fill(value);
            i += repeat;
        }
        if lens[256] == 0 {
            return Err(bits.error(InflateReason::MissingEndOfBlock));
        }
        huffman::build(
            &mut t.litlen,
            LITLEN_BITS,
            &lens[..nlit],
            CodeKind::LiteralLength,
        )
        .map_err(|r| bits.error(r))?;
        huffman::build(
            &mut t.dist,
            DIST_BITS,
            &lens[nlit..total],
            CodeKind::Distance,
        )
        .map_err(|r| bits.error(r))?;
        Ok(())
    }

    /// Decodes Huffman codes until the end of the block (`true`) or until
    /// the output reaches `out_limit` (`false`).
    fn huffman(
        &mut self,
        bits: &mut Bits<'_>,
        out: &mut Vec<u8>,
        o: &mut usize,
        out_limit: usize,
    ) -> Result<bool, InflateError> {
        let litlen = &self.tables.litlen;
        let dist = &self.tables.dist;
        let mut b = *bits;
        let mut at = *o;
        let result = loop {
            if at >= out_limit {
                break Ok(false);
            }
            grow(out, at, GROW_STEP, out_limit);
            let end = out_limit.min(out.len() - SLACK);
            let buf = &mut out[..];
            match decode(&mut b, litlen, dist, buf, &mut at, end) {
                Ok(true) => break Ok(true),
                Ok(false) => {}
                Err(e) => break Err(e),
            }
        };
        *bits = b;
        *o = at;
        result
    }
}

/// Makes room in `out` for `want` more bytes after `o` (fewer if that
/// passes `out_limit`) plus [`SLACK`], zero-filled.
fn grow(out: &mut Vec<u8>, o: usize, want: usize, out_limit: usize) {
    let cap = out_limit.max(o).saturating_add(SLACK);
    let len = o.saturating_add(want).saturating_add(SLACK).min(cap);
    if out.len() < len {
        out.resize(len, 0);
    }
}

/// The hot loop: decodes symbols into `buf` from `*at` while `*at < end`
/// (`end + SLACK <= buf.len()`). `Ok(true)` at the end-of-block code.
#[inline(always)]
fn decode(
    b: &mut Bits<'_>,
    litlen: &[u32; LITLEN_ENOUGH],
    dist: &[u32; DIST_ENOUGH],
    buf: &mut [u8],
    at: &mut usize,
    end: usize,
) -> Result<bool, InflateError> {
    const LIT_MASK: u64 = (1 << LITLEN_BITS) - 1;
    const DIST_MASK: u64 = (1 << DIST_BITS) - 1;
    let mut o = *at;
    let result = loop {
        if o >= end {
            break Ok(false);
        }
        if !b.refill() {
            break Err(b.truncated());
        }
        let mut e = litlen[(b.buf & LIT_MASK) as usize];
        if e & SUB != 0 {
            let sub = (b.buf >> LITLEN_BITS) as u32 & ((1 << ((e >> 4) & 15)) - 1);
            e = litlen[((e >> 16) + sub) as usize];
        }
        if e & LITERAL != 0 {
            b.consume(e & 15);
            buf[o] = (e >> 16) as u8;
            o += 1;
            // Up to two more literals from the same refill (3 * 15 bits
            // <= 56; their primary entries suffice, a longer code waits for
            // the next round). They may pass `end` by 2 bytes, into SLACK.
            let e = litlen[(b.buf & LIT_MASK) as usize];
            if e & LITERAL == 0 {
                continue;
            }
            b.consume(e & 15);
            buf[o] = (e >> 16) as u8;
            o += 1;
            let e = litlen[(b.buf & LIT_MASK) as usize];
            if e & LITERAL == 0 {
                continue;
            }
            b.consume(e & 15);
            buf[o] = (e >> 16) as u8;
            o += 1;
            continue;
        }
        if e & (END | INVALID) != 0 {
            if e & END != 0 {
                b.consume(e & 15);
                break Ok(true);
            }
            let reason = InflateReason::InvalidSymbol(CodeKind::LiteralLength);
            break Err(b.error_using(reason, e & 15));
        }
        let code = e & 15;
        let extra = (e >> 4) & 15;
        let len = (e >> 16) as usize + ((b.buf >> code) & ((1 << extra) - 1)) as usize;
        b.consume(code + extra);

        let mut d = dist[(b.buf & DIST_MASK) as usize];
        if d & SUB != 0 {
            let sub = (b.buf >> DIST_BITS) as u32 & ((1 << ((d >> 4) & 15)) - 1);
            d = dist[((d >> 16) + sub) as usize];
        }
        if d & INVALID != 0 {
            let reason = InflateReason::InvalidSymbol(CodeKind::Distance);
            break Err(b.error_using(reason, d & 15));
        }
        let code = d & 15;
        let extra = (d >> 4) & 15;
        let distance = (d >> 16) as usize + ((b.buf >> code) & ((1 << extra) - 1)) as usize;
        if distance > o {
            let reason = InflateReason::DistanceTooFar {
                distance: distance as u32,
                available: o as u64,
            };
            break Err(b.error_using(reason, code + extra));
        }
        b.consume(code + extra);
        copy_match(buf, o, distance, len);
        o += len;
    };
    *at = o;
    result
}

/// Appends the `len` bytes from `distance` back at `o` (may write up to 7
/// bytes past `o + len`; `buf` has room for that).
#[inline(always)]
fn copy_match(buf: &mut [u8], o: usize, distance: usize, len: usize) {
    let end = o + len;
    if distance >= 8 {
        let mut from = o - distance;
        let mut to = o;
        while to < end {
            buf.copy_within(from..from + 8, to);
            from += 8;
            to += 8;
        }
    } else if distance == 1 {
        let byte = buf[o - 1];
        buf[o..end].fill(byte);
    } else {
        for i in o..end {
            buf[i] = buf[i - distance];
        }
    }
}
