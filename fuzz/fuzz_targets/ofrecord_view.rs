//! OFRecord views: `parse` (plain and strict) and the lazy `new`, then every
//! accessor to the end. After a successful `parse` every accessor must
//! succeed and the counts must agree (see `recordwire_fuzz::features`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use recordwire::view::{DecodeOptions, OfRecordRef};
use recordwire_fuzz::{features, ok, validations, MISSING};

fuzz_target!(|data: &[u8]| {
    let (parsed, strict) = validations(
        OfRecordRef::parse(data, 8).map(drop),
        OfRecordRef::parse_with(data, 8, DecodeOptions { strict: true }).map(drop),
    );
    let rec = OfRecordRef::new(data, 8);
    assert_eq!(
        (rec.validate(false).is_ok(), rec.validate(true).is_ok()),
        (parsed, strict)
    );
    let _ = ok(rec.get(MISSING), parsed);
    features(rec.features(), parsed, strict);
});
