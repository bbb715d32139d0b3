//! Helpers shared by the unit tests.

use std::io::Write;

use proptest::test_runner::Config;

/// The proptest configuration of the unit tests: proptest's defaults
/// natively; under miri, which is several thousand times slower and (with
/// its isolation) cannot read `proptest-regressions/` or the environment,
/// a handful of cases and no regression file.
pub(crate) fn proptest_config() -> Config {
    if cfg!(miri) {
        Config {
            cases: 8,
            failure_persistence: None,
            ..Config::default()
        }
    } else {
        Config::default()
    }
}

/// `n` records of pseudo-random sizes (up to `max` bytes) and contents that
/// compress somewhat (words from a small vocabulary, some random bytes).
pub(crate) fn records(n: usize, max: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|i| {
            let len = (next() as usize) % (max + 1);
            let mut r = format!("#{i} ").into_bytes();
            while r.len() < len {
                let w = next();
                if w % 4 == 0 {
                    r.push(w as u8);
                } else {
                    r.extend_from_slice(
                        ["alpha ", "beta ", "gamma ", "delta "][(w >> 8) as usize % 4].as_bytes(),
                    );
                }
            }
            r.truncate(len.max(1));
            r
        })
        .collect()
}

pub(crate) fn gzip(data: &[u8], level: u32) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

pub(crate) fn zlib(data: &[u8], level: u32) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level));
    z.write_all(data).unwrap();
    z.finish().unwrap()
}
