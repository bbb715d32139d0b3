//! tf.SequenceExample views: `parse` (plain and strict) and the lazy `new`,
//! then every accessor to the end: the context features, and every feature
//! list with every feature in it. After a successful `parse` every accessor
//! must succeed and the counts must agree.
//!
//! The checks are in `recordwire_fuzz::targets::sequence_example_view`, shared with
//! `tests/files/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::targets::sequence_example_view(data));
