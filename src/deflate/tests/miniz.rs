//! [`Inflate`] against its twin, miniz_oxide's block-boundary API
//! (`TINFL_FLAG_STOP_ON_BLOCK_BOUNDARY`, `block_boundary_state`,
//! `from_block_boundary_state`): both stop at every block boundary of the
//! same streams, and must find the same boundaries (bit position and output
//! length there), the same end, and the same output when restarted from
//! each boundary with the window before it.

use miniz_oxide::inflate::core::inflate_flags::{
    TINFL_FLAG_STOP_ON_BLOCK_BOUNDARY, TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
};
use miniz_oxide::inflate::core::{decompress, BlockBoundaryState, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;
use proptest::prelude::*;

use super::{blocks, mixed, raw, BitWriter};
use crate::deflate::{end_byte, Inflate, Progress, WINDOW};

/// What a decoder saw of a stream: every block boundary as (bit, output
/// length there), the output, and the byte just after the stream.
#[derive(Debug, PartialEq, Eq)]
struct Walk {
    boundaries: Vec<(u64, usize)>,
    out: Vec<u8>,
    end_byte: usize,
}

/// Decodes `input[from_byte..]` with miniz_oxide's decompressor `r` into a
/// flat buffer after `window`, stopping at block boundaries when `stop`.
/// The buffer has room for `room` bytes of output (the caller knows the
/// size: it compressed the data). Boundary bits are absolute.
fn miniz_walk(
    input: &[u8],
    mut r: DecompressorOxide,
    from_byte: usize,
    window: &[u8],
    room: usize,
    stop: bool,
) -> Walk {
    let mut flags = TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
    if stop {
        flags |= TINFL_FLAG_STOP_ON_BLOCK_BOUNDARY;
    }
    // Spare room so that miniz_oxide never stops for a full buffer before
    // it has read the final end-of-block code.
    let mut out = window.to_vec();
    out.resize(window.len() + room + 64, 0);
    let mut pos = window.len();
    let mut at = from_byte;
    let mut boundaries = Vec::new();
    loop {
        let (status, read, written) = decompress(&mut r, &input[at..], &mut out, pos, flags);
        at += read;
        pos += written;
        match status {
            TINFLStatus::BlockBoundary => {
                let state = r.block_boundary_state().expect("at a boundary");
                let bit = at as u64 * 8 - u64::from(state.num_bits);
                boundaries.push((bit, pos - window.len()));
            }
            TINFLStatus::Done => break,
            other => panic!("miniz_oxide stopped with {other:?} at byte {at}"),
        }
    }
    out.truncate(pos);
    out.drain(..window.len());
    Walk {
        boundaries,
        out,
        end_byte: at,
    }
}

/// miniz_oxide's state at a block boundary, made from nothing but the bit
/// position and the input (what a checkpoint written by [`Inflate`] holds):
/// the decompressor and the byte to feed it from.
fn miniz_at(input: &[u8], bit: u64) -> (DecompressorOxide, usize) {
    let byte = (bit / 8) as usize;
    let skip = (bit % 8) as u32;
    let state = if skip == 0 {
        BlockBoundaryState::default()
    } else {
        BlockBoundaryState {
            num_bits: (8 - skip) as u8,
            bit_buf: input[byte] >> skip,
            ..BlockBoundaryState::default()
        }
    };
    let from = if skip == 0 { byte } else { byte + 1 };
    (DecompressorOxide::from_block_boundary_state(&state), from)
}

/// Our decoder's walk of the whole stream (boundaries after the first
/// block, as miniz_oxide reports them).
fn our_walk(input: &[u8]) -> Walk {
    let (mut starts, out, end) = blocks(input);
    assert_eq!(starts.remove(0), (0, 0));
    Walk {
        boundaries: starts,
        out,
        end_byte: end_byte(end),
    }
}

/// Our decoder restarted at `bit` with `window` before it, to the end.
fn our_restart(input: &[u8], bit: u64, window: &[u8]) -> (Vec<u8>, usize) {
    let mut out = window.to_vec();
    let p = Inflate::at(bit).run(input, &mut out, usize::MAX, false);
    let Ok(Progress::End { bit: end }) = p else {
        panic!("restart at bit {bit}: {p:?}");
    };
    out.drain(..window.len());
    (out, end_byte(end))
}

/// The block type (0 stored, 1 fixed, 2 dynamic) of the block at `bit`.
fn block_type(input: &[u8], bit: u64) -> u8 {
    let at = |b: u64| (input[(b / 8) as usize] >> (b % 8)) & 1;
    at(bit + 1) | at(bit + 2) << 1
}

/// Walks `input` (the raw deflate of `data`) with both decoders, stopping at
/// every boundary, and restarts both from each boundary (from about 12 of
/// them, spread over the stream, when it has more: each restart decodes the
/// rest of the stream). Returns how many blocks of each type (stored,
/// fixed, dynamic) the stream has.
fn twins_agree(input: &[u8], data: &[u8]) -> [usize; 3] {
    let ours = our_walk(input);
    let theirs = miniz_walk(input, DecompressorOxide::new(), 0, &[], data.len(), true);
    assert_eq!(ours.boundaries, theirs.boundaries, "boundaries");
    assert_eq!(ours.end_byte, theirs.end_byte, "end");
    assert!(ours.out == data, "our output");
    assert!(theirs.out == data, "miniz_oxide's output");

    let mut types = [0; 3];
    types[usize::from(block_type(input, 0))] += 1;
    for &(bit, _) in &ours.boundaries {
        types[usize::from(block_type(input, bit))] += 1;
    }
    let every = ours.boundaries.len().div_ceil(12).max(1);
    for &(bit, at) in ours.boundaries.iter().step_by(every) {
        let window = &data[at.saturating_sub(WINDOW)..at];
        let (mine, end) = our_restart(input, bit, window);
        let (r, from) = miniz_at(input, bit);
        let rest = miniz_walk(input, r, from, window, data.len() - at, false);
        assert!(mine == data[at..], "our restart at bit {bit}");
        assert!(rest.out == data[at..], "miniz_oxide's restart at bit {bit}");
        assert_eq!(end, rest.end_byte, "end after restart at bit {bit}");
    }
    types
}

/// `data` compressed by flate2 at `level` with a flush after every
/// `chunk` bytes, alternating sync flushes (the block ends, an empty stored
/// block follows) and full flushes (the same, and no match reaches back
/// before it).
fn flushed(data: &[u8], level: u32, chunk: usize) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress, Status};
    let mut c = Compress::new(Compression::new(level), false);
    let mut out = Vec::new();
    for (i, part) in data.chunks(chunk.max(1)).enumerate() {
        let flush = if i % 2 == 0 {
            FlushCompress::Sync
        } else {
            FlushCompress::Full
        };
        let mut rest = part;
        // Done once all input is in and the output was not filled up.
        while {
            out.reserve(rest.len() + 1024);
            let before = c.total_in();
            c.compress_vec(rest, &mut out, flush).expect("in memory");
            rest = &rest[(c.total_in() - before) as usize..];
            !rest.is_empty() || out.len() == out.capacity()
        } {}
    }
    while {
        out.reserve(1024);
        c.compress_vec(&[], &mut out, FlushCompress::Finish)
            .expect("in memory")
            != Status::StreamEnd
    } {}
    out
}

#[test]
fn boundaries_and_restarts_match_miniz_oxide() {
    let mut types = [0; 3];
    for (n, seed) in [(0, 1), (1, 2), (5_000, 3), (150_000, 4)] {
        let data = mixed(n, seed);
        let levels = if n > 100_000 {
            &[0, 1, 6, 9][..]
        } else {
            &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        };
        for &level in levels {
            let t = twins_agree(&raw(&data, level), &data);
            types.iter_mut().zip(t).for_each(|(a, b)| *a += b);
            for chunk in [100, 7_000, 60_000] {
                let t = twins_agree(&flushed(&data, level, chunk), &data);
                types.iter_mut().zip(t).for_each(|(a, b)| *a += b);
            }
        }
    }
    // Every kind of block was among the boundaries compared.
    assert!(types.iter().all(|&k| k > 10), "blocks by type {types:?}");
}

#[test]
fn hand_made_blocks_match_miniz_oxide() {
    // Fixed, stored (starting mid-byte) and fixed again, then a final
    // stored block: boundaries at bits that are not byte-aligned.
    let mut w = BitWriter::default();
    w.bits(0, 1).bits(1, 2);
    for &c in b"abc" {
        w.fixed(u32::from(c));
    }
    w.fixed(256);
    w.bits(0, 1).bits(0, 2);
    let pad = (8 - w.n % 8) % 8;
    w.bits(0, pad).bits(2, 16).bits(!2 & 0xffff, 16);
    w.bits(u32::from(b'd'), 8).bits(u32::from(b'e'), 8);
    w.bits(0, 1).bits(1, 2);
    // "abc" again as a match: length 3 (symbol 257), distance 5 (code 4,
    // one extra bit 0).
    w.fixed(257).code(4, 5).bits(0, 1);
    w.fixed(256);
    w.bits(1, 1).bits(0, 2);
    let pad = (8 - w.n % 8) % 8;
    w.bits(0, pad)
        .bits(1, 16)
        .bits(!1 & 0xffff, 16)
        .bits(u32::from(b'!'), 8);
    let input = w.finish();
    let types = twins_agree(&input, b"abcdeabc!");
    assert_eq!(types, [2, 2, 0]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn twins_agree_on_random_streams(
        n in 0usize..150_000,
        seed: u64,
        level in 0u32..=9,
        chunk in 1usize..40_000,
    ) {
        let data = mixed(n, seed);
        twins_agree(&raw(&data, level), &data);
        twins_agree(&flushed(&data, level, chunk), &data);
    }
}
