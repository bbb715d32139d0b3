//! The kernels against their scalar twins (and the `crc32c` crate as a
//! third opinion), on every length 0..=4096 at every alignment 0..8.

use super::scalar;

/// Deterministic pseudo-random bytes.
fn bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

/// Pseudo-random bytes shaped like packed varints: each byte is a
/// continuation byte with probability `cont`/256 (so 1- to 11-byte runs and
/// words without a terminator all occur).
pub(super) fn varint_bytes(n: usize, seed: u64, cont: u8) -> Vec<u8> {
    bytes(n, seed)
        .chunks(2)
        .flat_map(|p| {
            let b = p[0] & 0x7f;
            let c = p.get(1).copied().unwrap_or(0);
            [if c < cont { b | 0x80 } else { b }]
        })
        .cycle()
        .take(n)
        .collect()
}

/// A value drawn from a pseudo-random word.
pub(super) type Draw = fn(u64) -> u64;

/// A packed run of `n` bytes of minimal varints, values drawn by `draw`
/// from a pseudo-random word (the last one cut short where `n` falls).
pub(super) fn value_varints(n: usize, seed: u64, draw: Draw) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(n + 10);
    while out.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut v = draw(x);
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    out.truncate(n);
    out
}

/// Value distributions for [`value_varints`], with their names: BERT token
/// ids (`0..30522`: 1 byte in 0.4%, 2 bytes in 53%, 3 bytes in 46%), two-
/// and three-byte values, a log-uniform mix of 1 to 3 bytes, one of 1 to 4
/// bytes with a few longer ones, and any `u64`.
pub(super) const DRAWS: [(&str, Draw); 6] = [
    ("token ids", |x| (x >> 11) % 30522),
    ("2-3 bytes", |x| 0x80 + (x >> 11) % 0x1f_ff80),
    ("1-3 bytes, log-uniform", |x| {
        (x >> 11) & ((1 << (x % 22)) - 1)
    }),
    ("1-4 bytes, some longer", |x| {
        (x >> 8) & ((1u64 << (if x % 64 == 0 { 56 } else { x % 29 })) - 1)
    }),
    ("1-2 bytes", |x| (x >> 11) & ((1 << (x % 15)) - 1)),
    ("any u64", |x| x.rotate_left(17) >> (x % 64)),
];

/// A varint kernel behind a plain function pointer.
pub(super) type VarintKernel = fn(&[u8], &mut dyn FnMut(u64)) -> (usize, usize);

/// What a varint kernel returns and the values it emitted.
pub(super) fn run_varints(kernel: VarintKernel, d: &[u8]) -> ((usize, usize), Vec<u64>) {
    let mut values = Vec::new();
    let r = kernel(d, &mut |v| values.push(v));
    (r, values)
}

fn scalar_varints(d: &[u8], each: &mut dyn FnMut(u64)) -> (usize, usize) {
    scalar::varint_words(d, &mut |v| each(v))
}

#[test]
fn scalar_varint_words_match_byte_by_byte_decoding() {
    for (seed, cont) in [(1u64, 128u8), (2, 200), (3, 60), (4, 250), (5, 0)] {
        let d = varint_bytes(4096, seed, cont);
        for align in 0..8 {
            let d = &d[align..];
            let ((used, n), values) = run_varints(scalar_varints, d);
            // The reference: byte by byte over the bytes it says it used.
            let mut expected = Vec::new();
            let (mut v, mut shift) = (0u64, 0);
            for &b in &d[..used] {
                v |= u64::from(b & 0x7f) << shift;
                shift += 7;
                if b < 0x80 {
                    expected.push(v);
                    (v, shift) = (0, 0);
                }
            }
            assert_eq!(shift, 0, "stopped inside a varint");
            assert_eq!((n, &values), (expected.len(), &expected));
            // It stops only where it must: under 8 bytes left, or a word
            // with no terminator.
            let rest = &d[used..];
            assert!(rest.len() < 8 || rest[..8].iter().all(|&b| b >= 0x80));
        }
    }
}

/// [`varint_ends`](super::varint_ends)'s answer byte by byte: the reference
/// for its twin.
fn varint_ends_bytes(d: &[u8], mut run: usize) -> super::VarintEnds {
    let used = d.len() / 64 * 64;
    let (mut ends, mut too_long) = (0, false);
    for &b in &d[..used] {
        if b < 0x80 {
            ends += 1;
            run = 0;
        } else {
            run += 1;
            too_long |= run >= 10;
        }
    }
    super::VarintEnds {
        used,
        ends,
        run: run.min(10),
        too_long,
    }
}

#[test]
fn scalar_varint_ends_match_byte_by_byte_counting() {
    for (seed, cont) in [(11u64, 128u8), (12, 230), (13, 40), (14, 0), (15, 255)] {
        let d = varint_bytes(1024 + 8, seed, cont);
        for n in (0..=1024).step_by(if cfg!(miri) { 193 } else { 1 }) {
            for align in 0..if cfg!(miri) { 2 } else { 8 } {
                let d = &d[align..align + n];
                for run in [0, 1, 5, 9] {
                    assert_eq!(
                        scalar::varint_ends(d, run),
                        varint_ends_bytes(d, run),
                        "{n} bytes at {align}, run {run}, continuation odds {cont}/256"
                    );
                }
            }
        }
    }
}

/// A slice kernel's answer with `room` slots (filled with a marker first),
/// and the whole slice after it.
pub(super) fn run_into(
    kernel: fn(&[u8], &mut [u64]) -> (usize, usize),
    d: &[u8],
    room: usize,
) -> ((usize, usize), Vec<u64>) {
    let mut out = vec![0x5a5a_5a5a_5a5a_5a5a; room];
    let r = kernel(d, &mut out);
    (r, out)
}

/// Room sizes around the kernels' steps (8 and 16 values) and unbounded.
fn rooms(n: usize) -> [usize; 7] {
    [0, 7, 8, 16, 17, 40, n + 16]
}

#[test]
fn scalar_varints_into_is_varint_words_while_eight_slots_are_free() {
    for (seed, cont) in [(21u64, 128u8), (22, 200), (23, 30), (24, 0), (25, 250)] {
        let d = varint_bytes(2048, seed, cont);
        for n in (0..=2048).step_by(if cfg!(miri) { 409 } else { 7 }) {
            let d = &d[..n];
            let ((used_all, n_all), all) = run_varints(scalar_varints, d);
            for room in rooms(n) {
                let ((used, got), out) = run_into(scalar::varints_into, d, room);
                assert_eq!(&out[..got], &all[..got], "{n} bytes, room {room}");
                assert!(out[got..].iter().all(|&v| v == 0x5a5a_5a5a_5a5a_5a5a));
                if room >= n_all + 8 {
                    assert_eq!((used, got), (used_all, n_all), "{n} bytes, room {room}");
                } else if (used, got) != (used_all, n_all) {
                    // It stops early only for want of room.
                    assert!(room - got < 8, "{n} bytes, room {room}: stopped at {got}");
                }
            }
        }
    }
}

/// Lengths to try: all of 0..=4096 natively, fewer under miri.
fn lengths() -> Vec<usize> {
    if cfg!(miri) {
        vec![0, 1, 7, 8, 9, 95, 96, 97, 200, 1000]
    } else {
        (0..=4096).collect()
    }
}

#[test]
fn scalar_twin_matches_the_crc32c_crate() {
    let data = bytes(4096 + 8, 1);
    for n in lengths() {
        for align in 0..8 {
            let d = &data[align..align + n];
            assert_eq!(scalar::crc32c(0, d), crc32c::crc32c(d), "{n} at {align}");
        }
    }
    assert_eq!(scalar::crc32c(0, b"123456789"), 0xe306_9283);
}

#[test]
fn scalar_u64_matches_scalar_bytes() {
    for w in [
        0u64,
        1,
        u64::MAX,
        0x8000_0000_0000_0000,
        0xff,
        0x0123_4567_89ab_cdef,
    ] {
        assert_eq!(
            scalar::crc32c_u64(w),
            scalar::crc32c(0, &w.to_le_bytes()),
            "{w:#x}"
        );
    }
}

#[test]
fn continuing_a_crc_is_crc_of_the_concatenation() {
    let data = bytes(3000, 2);
    for split in [0, 1, 8, 100, 1499, 2999, 3000] {
        let (a, b) = data.split_at(split);
        assert_eq!(
            super::crc32c(super::crc32c(0, a), b),
            super::crc32c(0, &data)
        );
        assert_eq!(
            scalar::crc32c(scalar::crc32c(0, a), b),
            scalar::crc32c(0, &data)
        );
    }
}

/// `shift` (how the x86 kernel joins its streams) moves a raw state past
/// zero bytes exactly as feeding the zeros does.
#[test]
fn shift_is_feeding_zero_bytes() {
    let zeros = vec![0u8; 300];
    for (k, state) in [1u32, 0x8000_0000, 0xdead_beef, 0x1234_5678]
        .into_iter()
        .enumerate()
    {
        for n in [0usize, 1, 8, 33, 100, 300] {
            // scalar::crc32c inverts on the way in and out; undo both.
            let fed = !scalar::crc32c(!state, &zeros[..n]);
            assert_eq!(scalar::shift(state, n as u64), fed, "state {k}, {n} bytes");
        }
    }
}

/// The constants the x86 and ARM kernels join their streams with: a
/// carry-less multiply by `K[m]`, then one CRC32C instruction over the
/// 64-bit product from 0 (here its scalar twin), is `shift` past `8·m`
/// bytes.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[test]
fn k_constants_shift_a_state_past_8m_bytes() {
    fn clmul(a: u32, b: u32) -> u64 {
        (0..32)
            .filter(|i| (b >> i) & 1 != 0)
            .fold(0u64, |p, i| p ^ (u64::from(a) << i))
    }
    let step = if cfg!(miri) { 97 } else { 1 };
    for m in (1..=2 * scalar::MAX_LANE_WORDS).step_by(step) {
        for state in [1u32, 0x8000_0000, 0xdead_beef, 0x1234_5678] {
            let product = clmul(state, scalar::K[m]);
            // The raw CRC32C update of the product's 8 bytes from 0 (the
            // instruction), through the twin, which inverts in and out.
            let reduced = !scalar::crc32c(!0, &product.to_le_bytes());
            assert_eq!(reduced, scalar::shift(state, 8 * m as u64), "m {m}");
        }
    }
}

/// A prefetch is a hint: on every length (0 too) and alignment it neither
/// faults nor changes a byte, through the dispatcher and the twin.
#[test]
fn prefetch_reads_nothing_out_of_bounds_and_changes_nothing() {
    let data = bytes(4096 + 64, 12);
    let copy = data.clone();
    for n in lengths() {
        for align in [0, 1, 7, 63] {
            let d = &data[align..align + n];
            super::prefetch(d);
            scalar::prefetch(d);
        }
    }
    assert_eq!(data, copy);
}

#[test]
fn dispatch_is_cached_and_consistent() {
    let a = super::level();
    assert_eq!(super::level(), a);
    let data = bytes(5000, 3);
    assert_eq!(super::crc32c(0, &data), scalar::crc32c(0, &data));
    assert_eq!(super::crc32c_u64(42), scalar::crc32c_u64(42));
    let varints = varint_bytes(1000, 11, 128);
    assert_eq!(
        run_varints(|d, each| super::varint_words(d, &mut |v| each(v)), &varints),
        run_varints(scalar_varints, &varints)
    );
    assert_eq!(super::has_bmi2(), super::has_bmi2());
    if cfg!(miri) || super::no_simd_requested() {
        // CI runs the suite once with RECORDWIRE_NO_SIMD=1: this is that run.
        assert_eq!(a, super::Level::Scalar);
    } else {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("sse4.2")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
        {
            assert_eq!(a, super::Level::X86Crc);
        }
        #[cfg(target_arch = "aarch64")]
        if std::arch::is_aarch64_feature_detected!("crc")
            && std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("pmull")
        {
            assert_eq!(a, super::Level::Arm);
        }
    }
}

/// The level CI expects, where it names one in `RECORDWIRE_EXPECT_SIMD`
/// (`scalar`, `x86` or `arm`): a run meant to test the kernels (the
/// aarch64 one under qemu) fails here rather than passing on the twins
/// when detection found less than it should. Without the variable, nothing
/// to check.
#[test]
fn level_is_the_one_ci_expects() {
    let Some(want) = std::env::var_os("RECORDWIRE_EXPECT_SIMD") else {
        return;
    };
    let want = match want.to_str() {
        Some("scalar") => super::Level::Scalar,
        Some("x86") => super::Level::X86Crc,
        Some("arm") => super::Level::Arm,
        other => panic!("RECORDWIRE_EXPECT_SIMD={other:?}: expected scalar, x86 or arm"),
    };
    assert_eq!(super::level(), want, "the kernels detected on this CPU");
}

/// The checks each architecture's kernels go through (the `x86` and
/// `aarch64` modules below): a kernel against its twin on every length
/// 0..=4096 at every alignment 0..8.
#[cfg(all(any(target_arch = "x86_64", target_arch = "aarch64"), not(miri)))]
mod check {
    use super::{bytes, lengths, rooms, run_into, scalar, varint_bytes};

    /// A CRC32C kernel, from several starting CRCs. The same bytes are put
    /// at each alignment, so that the twin's answer is taken once per length
    /// rather than eight times (most of this check's time under qemu).
    pub(super) fn crc32c(kernel: fn(u32, &[u8]) -> u32) {
        let data = bytes(4096, 4);
        let mut at = vec![0u8; 4096 + 8];
        for n in lengths() {
            let src = &data[..n];
            let twin = [0u32, 0xffff_ffff, 0x1234_5678].map(|crc| (crc, scalar::crc32c(crc, src)));
            for align in 0..8 {
                at[align..align + n].copy_from_slice(src);
                let d = &at[align..align + n];
                for (crc, want) in twin {
                    assert_eq!(kernel(crc, d), want, "{n} bytes at {align}, from {crc:#x}");
                }
            }
        }
    }

    /// A CRC32C kernel on long inputs: one round of three full lanes, and
    /// past several, with tails of every kind.
    pub(super) fn crc32c_long(kernel: fn(u32, &[u8]) -> u32) {
        let round = 24 * scalar::MAX_LANE_WORDS;
        for n in [round - 1, round, round + 1, 2 * round + 17, 40_000, 300_003] {
            let d = bytes(n, n as u64);
            assert_eq!(kernel(0, &d), scalar::crc32c(0, &d), "{n}");
        }
    }

    /// A one-word CRC32C kernel.
    pub(super) fn crc32c_u64(kernel: fn(u64) -> u32) {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for w in [x, x & 0xffff, !x] {
                assert_eq!(kernel(w), scalar::crc32c_u64(w), "{w:#x}");
            }
        }
    }

    /// A `varint_ends` kernel, from several runs carried in. The twin looks
    /// at whole 64-byte blocks only (`scalar_varint_ends_match_byte_by_byte_counting`
    /// checks it at every length), so its answer is taken once per number
    /// of blocks, at the first length with that many, and the kernel's is
    /// compared with it at every length: the kernel still sees all of them,
    /// and the twin's 64-fold repeats (most of this check's time, under
    /// qemu most of all) go.
    pub(super) fn varint_ends(kernel: fn(&[u8], usize) -> crate::arch::VarintEnds) {
        for (seed, cont) in [(16u64, 128u8), (17, 230), (18, 40), (19, 0), (20, 255)] {
            let data = varint_bytes(4096 + 8, seed, cont);
            for align in 0..8 {
                for run in [0, 3, 8, 9] {
                    let mut twin = None;
                    for n in lengths() {
                        let d = &data[align..align + n];
                        let want = match twin {
                            Some((blocks, want)) if blocks == n / 64 => want,
                            _ => {
                                let want = scalar::varint_ends(d, run);
                                twin = Some((n / 64, want));
                                want
                            }
                        };
                        assert_eq!(
                            kernel(d, run),
                            want,
                            "{n} bytes at {align}, run {run}, continuation odds {cont}/256"
                        );
                    }
                }
            }
        }
    }

    /// A `varints_into` kernel, with room for fewer values than there are,
    /// around its steps, and for all. As for the CRC, the same bytes at
    /// each alignment: the twin's answers once per length.
    pub(super) fn varints_into(kernel: fn(&[u8], &mut [u64]) -> (usize, usize)) {
        for (seed, cont) in [(26u64, 128u8), (27, 230), (28, 20), (29, 0), (30, 255)] {
            let data = varint_bytes(4096, seed, cont);
            let mut at = vec![0u8; 4096 + 8];
            for n in lengths() {
                let src = &data[..n];
                let twin = rooms(n).map(|room| (room, run_into(scalar::varints_into, src, room)));
                for align in 0..8 {
                    at[align..align + n].copy_from_slice(src);
                    let d = &at[align..align + n];
                    for (room, want) in &twin {
                        assert_eq!(
                            &run_into(kernel, d, *room),
                            want,
                            "{n} bytes at {align}, room {room}, continuation odds {cont}/256"
                        );
                    }
                }
            }
        }
    }
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod x86;

/// The aarch64 kernels against their twins: what `x86` above checks, on
/// ARM (CI runs it under qemu-aarch64, whose default CPU has crc, aes/pmull
/// and neon).
#[cfg(all(target_arch = "aarch64", not(miri)))]
mod aarch64 {
    use super::check;
    use crate::arch::aarch64 as arm;

    fn has_features() -> bool {
        let ok = std::arch::is_aarch64_feature_detected!("neon")
            && std::arch::is_aarch64_feature_detected!("crc")
            && std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("pmull");
        if !ok {
            eprintln!(
                "SKIP: this CPU lacks crc/aes/pmull/neon; the ARM kernels are not tested here"
            );
        }
        ok
    }

    #[test]
    fn kernel_matches_its_twin_at_every_length_and_alignment() {
        if !has_features() {
            return;
        }
        check::crc32c(arm::crc32c);
    }

    #[test]
    fn kernel_matches_on_long_inputs() {
        if !has_features() {
            return;
        }
        check::crc32c_long(arm::crc32c);
    }

    #[test]
    fn varint_ends_kernel_matches_its_twin_at_every_length_and_alignment() {
        if !has_features() {
            return;
        }
        check::varint_ends(arm::varint_ends);
    }

    #[test]
    fn varints_into_kernel_matches_its_twin_at_every_length_and_alignment() {
        if !has_features() {
            return;
        }
        check::varints_into(arm::varints_into);
    }

    #[test]
    fn u64_kernel_matches_its_twin() {
        if !has_features() {
            return;
        }
        check::crc32c_u64(arm::crc32c_u64);
    }
}

/// The example of [`crc32c`](super::crc32c)'s doc.
#[test]
fn crc32c_example() {
    use super::crc32c;
    assert_eq!(crc32c(0, b"123456789"), 0xe306_9283);
    assert_eq!(crc32c(crc32c(0, b"1234"), b"56789"), 0xe306_9283);
}

/// The example of [`crc32c_u64`](super::crc32c_u64)'s doc.
#[test]
fn crc32c_u64_example() {
    use super::{crc32c, crc32c_u64};
    assert_eq!(crc32c_u64(1234), crc32c(0, &1234u64.to_le_bytes()));
}

/// The example of [`varint_words`](super::varint_words)'s doc.
#[test]
fn varint_words_example() {
    use super::varint_words;
    // 300, 1, 70000, 5 (2 + 1 + 3 + 1 bytes), then a lone byte
    let bytes = [0xac, 0x02, 0x01, 0xf0, 0xa2, 0x04, 0x05, 0x80, 0x7f];
    let mut values = Vec::new();
    assert_eq!(varint_words(&bytes, &mut |v| values.push(v)), (7, 4));
    assert_eq!(values, [300, 1, 70_000, 5]);
}

/// The example of [`varints_into`](super::varints_into)'s doc.
#[test]
fn varints_into_example() {
    use super::varints_into;
    // 300, 1, 70000, 5 (2 + 1 + 3 + 1 bytes), then a lone byte
    let bytes = [0xac, 0x02, 0x01, 0xf0, 0xa2, 0x04, 0x05, 0x80, 0x7f];
    let mut out = [0u64; 12];
    assert_eq!(varints_into(&bytes, &mut out), (7, 4));
    assert_eq!(out[..5], [300, 1, 70_000, 5, 0]);
    // Room for fewer than 8 values: nothing is decoded.
    assert_eq!(varints_into(&bytes, &mut out[..7]), (0, 0));
}

/// The example of [`varint_ends`](super::varint_ends)'s doc.
#[test]
fn varint_ends_example() {
    use super::varint_ends;
    // 64 bytes: 32 two-byte varints (0x96 0x01 = 150).
    let bytes = [0x96u8, 0x01].repeat(32);
    let scan = varint_ends(&bytes, 0);
    assert_eq!(
        (scan.used, scan.ends, scan.run, scan.too_long),
        (64, 32, 0, false)
    );
    // Ten continuation bytes in a row.
    let mut long = vec![0u8; 64];
    long[20..30].fill(0x80);
    assert!(varint_ends(&long, 0).too_long);
}
