//! The frame walk over any bytes: TFRecord and OFRecord, every error policy,
//! with and without data CRCs; the invariants are checked in `walk`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recordwire::frame::{detect, Framing};
use recordwire_fuzz::{walk_slice, POLICIES};

fuzz_target!(|data: &[u8]| {
    let _ = detect(data);
    for framing in [Framing::TfRecord, Framing::OfRecord] {
        for policy in POLICIES {
            walk_slice(data, framing, policy, true);
        }
        walk_slice(data, framing, POLICIES[3], false);
    }
});
