//! The x86-64 kernels against their twins (the checks of `check`).

use super::{bytes, check, lengths, run_varints, scalar, scalar_varints, varint_bytes};

fn has_features() -> bool {
    let ok = std::arch::is_x86_feature_detected!("sse4.2")
        && std::arch::is_x86_feature_detected!("pclmulqdq");
    if !ok {
        eprintln!("SKIP: this CPU lacks sse4.2/pclmulqdq; the x86 kernels are not tested here");
    }
    ok
}

#[test]
fn kernel_matches_its_twin_at_every_length_and_alignment() {
    if !has_features() {
        return;
    }
    check::crc32c(crate::arch::x86::crc32c);
}

#[test]
fn kernel_matches_on_long_inputs() {
    if !has_features() {
        return;
    }
    check::crc32c_long(crate::arch::x86::crc32c);
}

fn bmi2_varints(d: &[u8], each: &mut dyn FnMut(u64)) -> (usize, usize) {
    crate::arch::x86::varint_words(d, &mut |v| each(v))
}

#[test]
fn varint_kernel_matches_its_twin_at_every_length_and_alignment() {
    if !(std::arch::is_x86_feature_detected!("bmi1") && std::arch::is_x86_feature_detected!("bmi2"))
    {
        eprintln!("SKIP: this CPU lacks bmi2; the varint kernel is not tested here");
        return;
    }
    for (seed, cont) in [(6u64, 128u8), (7, 230), (8, 40), (9, 0), (10, 255)] {
        let data = varint_bytes(4096 + 8, seed, cont);
        for n in lengths() {
            for align in 0..8 {
                let d = &data[align..align + n];
                assert_eq!(
                    run_varints(bmi2_varints, d),
                    run_varints(scalar_varints, d),
                    "{n} bytes at {align}, continuation odds {cont}/256"
                );
            }
        }
    }
}

#[test]
fn varint_ends_kernel_matches_its_twin_at_every_length_and_alignment() {
    if !has_features() || !std::arch::is_x86_feature_detected!("popcnt") {
        return;
    }
    check::varint_ends(crate::arch::x86::varint_ends);
}

#[test]
fn varints_into_kernel_matches_its_twin_at_every_length_and_alignment() {
    if !has_varints_into_features() {
        return;
    }
    check::varints_into(crate::arch::x86::varints_into);
}

fn has_varints_into_features() -> bool {
    let ok = has_features()
        && std::arch::is_x86_feature_detected!("ssse3")
        && std::arch::is_x86_feature_detected!("sse4.1")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("lzcnt");
    if !ok {
        eprintln!("SKIP: this CPU lacks ssse3/sse4.1/bmi2/lzcnt; the varints_into kernel is not tested here");
    }
    ok
}

/// Runs of real values (mostly 2- and 3-byte varints, which go through
/// the shuffle table): every length and alignment, the usual rooms.
#[test]
fn varints_into_kernel_matches_its_twin_on_short_varint_runs() {
    if !has_varints_into_features() {
        return;
    }
    for (k, (name, draw)) in super::DRAWS.into_iter().enumerate() {
        let data = super::value_varints(4096 + 8, 40 + k as u64, draw);
        for n in lengths() {
            for align in 0..8 {
                let d = &data[align..align + n];
                for room in super::rooms(n) {
                    assert_eq!(
                        super::run_into(crate::arch::x86::varints_into, d, room),
                        super::run_into(scalar::varints_into, d, room),
                        "{n} bytes at {align}, room {room}, {name}"
                    );
                }
            }
        }
    }
}

/// Every continuation mask of a 16-byte block (so every pair of steps,
/// every shuffle entry and every way out of the block), each with two
/// payloads and 8 more bytes after it, at rooms around the block's 16.
#[test]
fn varints_into_kernel_matches_its_twin_on_every_block_mask() {
    if !has_varints_into_features() {
        return;
    }
    let payload = bytes(2 * 24, 77);
    let mut d = [0u8; 24];
    for m in 0..=u16::MAX {
        for p in payload.chunks_exact(24) {
            for (k, b) in d.iter_mut().enumerate() {
                let cont = k < 16 && (m >> k) & 1 != 0;
                *b = (p[k] & 0x7f) | if cont { 0x80 } else { 0 };
            }
            same_as_twin(&d, &[15, 16, 17, 24], || format!("mask {m:#06x}"));
        }
    }
}

/// `varints_into` and its twin agree on `d` with each room in `rooms`.
fn same_as_twin(d: &[u8], rooms: &[usize], what: impl Fn() -> String) {
    for &room in rooms {
        assert_eq!(
            super::run_into(crate::arch::x86::varints_into, d, room),
            super::run_into(scalar::varints_into, d, room),
            "{}, room {room}",
            what()
        );
    }
}

/// Every continuation mask in each 16-byte quarter of a 64-byte window
/// (the rest two-byte varints, and 16 more bytes after it), with room
/// for the window's 72 slots and with room for less.
#[test]
fn varints_into_kernel_matches_its_twin_on_every_window_mask() {
    if !has_varints_into_features() {
        return;
    }
    let payload = bytes(80, 78);
    let mut d = [0u8; 80];
    for quarter in 0..4 {
        for m in 0..=u16::MAX {
            for (k, (b, p)) in d.iter_mut().zip(&payload).enumerate() {
                let cont = if k / 16 == quarter {
                    (m >> (k % 16)) & 1 != 0
                } else {
                    k % 2 == 0
                };
                *b = (p & 0x7f) | if cont { 0x80 } else { 0 };
            }
            same_as_twin(&d, &[71, 72, 80], || {
                format!("mask {m:#06x} in quarter {quarter}")
            });
        }
    }
}

/// The table against the word walk: the entry of each continuation mask
/// is for the path exactly when 2 to 4 varints of at most 4 bytes end in
/// the word, its count is the walk's, and its lanes gather
/// varints 0, 1, c − 2 and c − 1.
#[test]
fn short_steps_table_is_the_word_walk() {
    use crate::arch::x86::SHORT_STEPS;
    for m in 0..256usize {
        let ends: Vec<usize> = (0..8).filter(|k| (m >> k) & 1 == 0).collect();
        let starts: Vec<usize> = std::iter::once(0)
            .chain(ends.iter().map(|e| e + 1))
            .collect();
        let lens: Vec<usize> = ends.iter().zip(&starts).map(|(e, s)| e + 1 - s).collect();
        let c = ends.len();
        let short = (2..=4).contains(&c) && lens.iter().all(|&l| l <= 4);
        let e = SHORT_STEPS.meta[m];
        assert_eq!(e != 0, short, "mask {m:#04x}");
        if !short {
            continue;
        }
        assert_eq!(usize::from(e & 0x7f) + 2, c, "mask {m:#04x}");
        let mut want = [0x80u8; 16];
        for (lane, v) in [0, 1, c - 2, c - 1].into_iter().enumerate() {
            for b in 0..lens[v] {
                want[4 * lane + b] = (starts[v] + b) as u8;
            }
        }
        assert_eq!(SHORT_STEPS.shuffle[m].0, want, "mask {m:#04x}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Any values, most of them 1 to 3 bytes long, after a few bytes of
    /// anything (a run need not start at a varint's start), into any
    /// room: the kernel returns and writes what its twin does.
    #[test]
    fn varints_into_kernel_matches_its_twin_on_any_values(
        values in proptest::collection::vec(proptest::prop_oneof![
            4 => 0u64..30522,
            2 => 0x80u64..0x20_0000,
            1 => 0u64..0x80,
            1 => 0u64..(1 << 28),
            1 => proptest::prelude::any::<u64>(),
        ], 0..300),
        lead in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..12),
        room in 0usize..400,
    ) {
        if !has_varints_into_features() {
            return Ok(());
        }
        let mut d = lead;
        for mut v in values {
            while v >= 0x80 {
                d.push(v as u8 | 0x80);
                v >>= 7;
            }
            d.push(v as u8);
        }
        proptest::prop_assert_eq!(
            super::run_into(crate::arch::x86::varints_into, &d, room),
            super::run_into(scalar::varints_into, &d, room)
        );
    }
}

#[test]
fn u64_kernel_matches_its_twin() {
    if !has_features() {
        return;
    }
    check::crc32c_u64(crate::arch::x86::crc32c_u64);
}
