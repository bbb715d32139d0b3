//! **Not API.** Entry points into the crate's internals (the CPU kernels of
//! `arch`, the DEFLATE decoder of `deflate`) for this repository's fuzz
//! targets, benches and examples, which are separate crates. It exists only
//! with the `internals` feature, which those crates enable (`fuzz/Cargo.toml`,
//! and the crate's own dev-dependency on itself for benches, examples and
//! tests); it is hidden from the docs and exempt from semver: anything here
//! may change or go in any release.
//!
//! What is here is the least those crates need: the two differential checks
//! the `arch_kernels` and `deflate` fuzz targets run ([`check_kernels`],
//! [`check_inflate`]), and re-exports of what the benches and examples time
//! ([`arch`], [`deflate`]).

/// The CPU kernels that `examples/crc_bench.rs` and `benches/read.rs` time.
pub mod arch {
    pub use crate::arch::{crc32c, level, varint_words};

    /// The portable twins of the kernels above.
    pub mod scalar {
        pub use crate::arch::scalar::varint_words;
    }
}

/// The inflater and the GZIP pieces that `examples/inflate_bench.rs` times.
pub mod deflate {
    pub use crate::deflate::{end_byte, gzip_header, gzip_trailer, Inflate, Progress, WINDOW};
}

/// The CPU kernels (the ones this CPU runs) against their scalar twins on
/// `data`: the CRC32C of the input at every alignment 0..8, from several
/// starting CRCs, the one-word CRC of its first 8 bytes, and the input as a
/// packed run of varints, as it is and shaped into short varints. Panics on the first disagreement (the `arch_kernels`
/// fuzz target).
pub fn check_kernels(data: &[u8]) {
    use crate::arch::{crc32c, crc32c_u64, scalar, varint_ends, varint_words};
    for align in 0..data.len().min(8) {
        let d = &data[align..];
        let (mut fast, mut twin) = (Vec::new(), Vec::new());
        assert_eq!(
            varint_words(d, &mut |v| fast.push(v)),
            scalar::varint_words(d, &mut |v| twin.push(v)),
            "varints: {} bytes at {align}",
            d.len()
        );
        assert_eq!(fast, twin, "varint values: {} bytes at {align}", d.len());
        check_varints_into(d, align);
        for run in [0, 9] {
            assert_eq!(
                varint_ends(d, run),
                scalar::varint_ends(d, run),
                "varint ends: {} bytes at {align}, run {run}",
                d.len()
            );
        }
        for crc in [0, !0, 0x1234_5678] {
            assert_eq!(
                crc32c(crc, d),
                scalar::crc32c(crc, d),
                "{} bytes at {align}",
                d.len()
            );
        }
    }
    // The input shaped as a run of short varints (a byte's high bit cleared
    // after `cap` continuation bytes, `cap` 0 to 3 as the first byte picks),
    // so that most 16-byte blocks go through the shuffle table of
    // `varints_into` (varints of 1 to 4 bytes) rather than the `pext` words.
    if let Some(&first) = data.first() {
        let cap = first % 4;
        let mut run = 0;
        let short: Vec<u8> = data
            .iter()
            .map(|&b| {
                if b >= 0x80 && run < cap {
                    run += 1;
                    b
                } else {
                    run = 0;
                    b & 0x7f
                }
            })
            .collect();
        for align in 0..short.len().min(8) {
            check_varints_into(&short[align..], align);
        }
    }
    if let Some(w) = data.get(..8) {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        let w = u64::from_le_bytes(b);
        assert_eq!(crc32c_u64(w), scalar::crc32c_u64(w), "{w:#x}");
    }
}

/// `varints_into` against its twin on `d` (at `align` in the input), with
/// room for no value, for 8, 16 and 17 (around the kernel's blocks), half
/// of `d`'s length and all of it: the same answer and the same slots.
fn check_varints_into(d: &[u8], align: usize) {
    use crate::arch::{scalar, varints_into};
    for room in [0, 8, 16, 17, d.len() / 2, d.len()] {
        let (mut fast, mut twin) = (vec![0u64; room], vec![0u64; room]);
        assert_eq!(
            varints_into(d, &mut fast),
            scalar::varints_into(d, &mut twin),
            "varints into {room} slots: {} bytes at {align}",
            d.len()
        );
        assert_eq!(fast, twin, "varint slots: {} bytes at {align}", d.len());
    }
}

/// The inflater on `data`, against miniz_oxide (flate2's `Decompress`):
/// (1) the input as a raw deflate stream, decoded with a 16 MiB limit and
/// stops at every block: when ours decodes it to its end, miniz_oxide must
/// give the same bytes and end at the same byte, and a restart at each block
/// start (with the window before it) must give the rest; (2) the input after
/// its first byte compressed by flate2 at the level that byte picks (in two
/// parts, with a flush between), which ours must decode exactly, restarts
/// included. Panics on the first disagreement (the `deflate` fuzz target).
pub fn check_inflate(data: &[u8]) {
    use crate::deflate::end_byte;
    use std::io::Write;

    if let Some(Blocks { out, starts, end }) = inflate_blocks(data) {
        let mut theirs = Vec::with_capacity(out.len() + 64);
        let mut d = flate2::Decompress::new(false);
        let status = d.decompress_vec(data, &mut theirs, flate2::FlushDecompress::Finish);
        assert!(
            matches!(status, Ok(flate2::Status::StreamEnd)),
            "ours decoded {} bytes, miniz_oxide: {status:?}",
            out.len()
        );
        assert!(theirs == out, "ours and miniz_oxide differ");
        assert_eq!(d.total_in(), end_byte(end) as u64, "where the stream ends");
        check_restarts(data, &out, &starts, end);
    }

    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let level = u32::from(first % 10);
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
    let (a, b) = rest.split_at(rest.len() / 2);
    let compressed = (|| {
        e.write_all(a)?;
        e.flush()?;
        e.write_all(b)?;
        e.finish()
    })()
    .expect("in memory");
    let Blocks { out, starts, end } = inflate_blocks(&compressed).expect("flate2's own stream");
    assert!(out == rest, "level {level}: ours decoded other bytes");
    assert_eq!(end_byte(end), compressed.len());
    check_restarts(&compressed, &out, &starts, end);
}

/// A raw deflate stream decoded to its end, stopping at every block.
struct Blocks {
    /// The whole output.
    out: Vec<u8>,
    /// Where each block starts: (bit, output length before it).
    starts: Vec<(u64, usize)>,
    /// The bit just after the stream.
    end: u64,
}

/// Decodes a raw deflate stream with a 16 MiB limit, stopping at every
/// block, or `None` when it fails or passes the limit.
fn inflate_blocks(input: &[u8]) -> Option<Blocks> {
    use crate::deflate::{Inflate, Progress};
    const LIMIT: usize = 16 << 20;
    let mut inflate = Inflate::at(0);
    let mut out = Vec::new();
    let mut starts = vec![(0, 0)];
    loop {
        match inflate.run(input, &mut out, LIMIT, true) {
            Ok(Progress::Block { bit }) => starts.push((bit, out.len())),
            Ok(Progress::End { bit }) => {
                return Some(Blocks {
                    out,
                    starts,
                    end: bit,
                })
            }
            Ok(Progress::Limit) | Err(_) => return None,
        }
    }
}

/// Restarts at (up to 16 of) the block starts, each with the window before
/// it, in 4 KiB steps: the rest of the output and the end must agree.
fn check_restarts(input: &[u8], out: &[u8], starts: &[(u64, usize)], end: u64) {
    use crate::deflate::{Inflate, Progress, WINDOW};
    let every = starts.len().div_ceil(16).max(1);
    for &(bit, at) in starts.iter().step_by(every) {
        let mut seeded = out[at.saturating_sub(WINDOW)..at].to_vec();
        let window = seeded.len();
        let mut inflate = Inflate::at(bit);
        loop {
            let limit = seeded.len() + 4096;
            match inflate.run(input, &mut seeded, limit, false) {
                Ok(Progress::Limit) => {}
                Ok(Progress::End { bit }) => {
                    assert_eq!(bit, end, "restart at bit {bit}: end");
                    break;
                }
                r => panic!("restart at bit {bit}: {r:?}"),
            }
        }
        assert!(
            seeded[window..] == out[at..],
            "restart at bit {bit}: output"
        );
    }
}
