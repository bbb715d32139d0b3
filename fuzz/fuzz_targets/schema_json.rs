//! Any message by a schema given at run time, printed as JSON
//! (`Schema::write_json`, `cat --message`): one of the schemas of
//! `testdata/schema/` picked by the first byte, every option set agreeing,
//! and the output one line of JSON or a named error inside the record.
//!
//! The checks are in `recordwire_fuzz::schema::schema_json`, shared with
//! `tests/files/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::schema::schema_json(data));
