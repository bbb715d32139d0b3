//! tf.Example views: `parse` (plain and strict) and the lazy `new`, then every
//! accessor to the end. After a successful `parse` every accessor must
//! succeed and the counts must agree (see `recordwire_fuzz::features`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use recordwire::view::{DecodeOptions, ExampleRef};
use recordwire_fuzz::{features, ok, validations, MISSING};

fuzz_target!(|data: &[u8]| {
    let (parsed, strict) = validations(
        ExampleRef::parse(data, 7).map(drop),
        ExampleRef::parse_with(data, 7, DecodeOptions { strict: true }).map(drop),
    );
    let ex = ExampleRef::new(data, 7);
    assert_eq!(
        (ex.validate(false).is_ok(), ex.validate(true).is_ok()),
        (parsed, strict)
    );
    let _ = ok(ex.has_features(), parsed);
    let _ = ok(ex.get(MISSING), parsed);
    features(ex.features(), parsed, strict);
});
