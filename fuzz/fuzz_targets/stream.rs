//! The streaming reader (`Source::from_reader`, fed in chunks) against the
//! in-memory walk `RecordFile::from_bytes(..).records()` over the same bytes,
//! with every error policy and several read sizes: read as plain input they
//! must agree exactly; input that starts like GZIP or ZLIB is also read
//! decompressed (see `recordwire_fuzz::same_walk` for what must agree there).
#![no_main]

use libfuzzer_sys::fuzz_target;
use recordwire::frame::{detect, Detected};
use recordwire::io::Compression;
use recordwire_fuzz::{stream_matches_file, POLICIES};

fuzz_target!(|data: &[u8]| {
    let compressed = matches!(detect(data), Detected::Gzip | Detected::Zlib);
    for (policy, step) in POLICIES.into_iter().zip([1, 7, 4096, usize::MAX]) {
        stream_matches_file(data, policy, step, Compression::None);
        if compressed {
            stream_matches_file(data, policy, step, Compression::Auto);
        }
    }
});
