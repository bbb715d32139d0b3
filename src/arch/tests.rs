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

#[test]
fn dispatch_is_cached_and_consistent() {
    let a = super::level();
    assert_eq!(super::level(), a);
    let data = bytes(5000, 3);
    assert_eq!(super::crc32c(0, &data), scalar::crc32c(0, &data));
    assert_eq!(super::crc32c_u64(42), scalar::crc32c_u64(42));
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
    }
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod x86 {
    use super::{bytes, lengths, scalar};

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
        let data = bytes(4096 + 8, 4);
        for n in lengths() {
            for align in 0..8 {
                let d = &data[align..align + n];
                for crc in [0u32, 0xffff_ffff, 0x1234_5678] {
                    assert_eq!(
                        crate::arch::x86::crc32c(crc, d),
                        scalar::crc32c(crc, d),
                        "{n} bytes at {align}, from {crc:#x}"
                    );
                }
            }
        }
    }

    #[test]
    fn kernel_matches_on_long_inputs() {
        if !has_features() {
            return;
        }
        // Past several rounds of 3 x 4 KiB lanes.
        for n in [12 * 1024, 12 * 1024 + 1, 40_000, 100_003] {
            let d = bytes(n, n as u64);
            assert_eq!(
                crate::arch::x86::crc32c(0, &d),
                scalar::crc32c(0, &d),
                "{n}"
            );
        }
    }

    #[test]
    fn u64_kernel_matches_its_twin() {
        if !has_features() {
            return;
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for w in [x, x & 0xffff, !x] {
                assert_eq!(
                    crate::arch::x86::crc32c_u64(w),
                    scalar::crc32c_u64(w),
                    "{w:#x}"
                );
            }
        }
    }
}
