//! Decode, encode, decode: a valid record of any payload kind, turned into
//! the owned message and encoded again, gives a record that passes strict
//! validation, shows the same JSON (the same values), and encodes to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recordwire::json::write_record;
use recordwire::view::DecodeOptions;
use recordwire_fuzz::{reencode, PAYLOADS};

fuzz_target!(|data: &[u8]| {
    for kind in PAYLOADS {
        if kind.validate(data, 0, DecodeOptions::default()).is_err() {
            continue;
        }
        let bytes = reencode(kind, data);
        let strict = kind.validate(&bytes, 0, DecodeOptions { strict: true });
        assert!(
            strict.is_ok(),
            "{kind:?}: the encoding is not canonical: {strict:?}"
        );
        assert_eq!(
            reencode(kind, &bytes),
            bytes,
            "{kind:?}: encoding is not a fixpoint"
        );
        let (mut before, mut after) = (Vec::new(), Vec::new());
        write_record(&mut before, kind, data, 0, false, None).expect("valid");
        write_record(&mut after, kind, &bytes, 0, false, None).expect("valid");
        assert_eq!(
            String::from_utf8_lossy(&before),
            String::from_utf8_lossy(&after),
            "{kind:?}"
        );
    }
});
