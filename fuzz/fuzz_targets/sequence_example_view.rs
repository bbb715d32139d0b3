//! tf.SequenceExample views: `parse` (plain and strict) and the lazy `new`,
//! then every accessor to the end: the context features, and every feature
//! list with every feature in it. After a successful `parse` every accessor
//! must succeed and the counts must agree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recordwire::view::{DecodeOptions, SequenceExampleRef};
use recordwire_fuzz::{feature_list, features, named_lists, ok, validations};

fuzz_target!(|data: &[u8]| {
    let (parsed, strict) = validations(
        SequenceExampleRef::parse(data, 12).map(drop),
        SequenceExampleRef::parse_with(data, 12, DecodeOptions { strict: true }).map(drop),
    );
    let seq = SequenceExampleRef::new(data, 12);
    assert_eq!(
        (seq.validate(false).is_ok(), seq.validate(true).is_ok()),
        (parsed, strict)
    );
    let _ = ok(seq.has_parts(), parsed);
    features(seq.context(), parsed, strict);
    for list in named_lists(seq.feature_lists(), parsed, strict) {
        feature_list(list, parsed, strict);
    }
});
