//! JSON of every payload kind (plain and strict, all features or a filter):
//! it succeeds exactly when the record validates, and then it is one line of
//! valid JSON (RFC 8259; OFRecord names that are not UTF-8 use `\udcXX`
//! escapes, which are valid JSON that serde_json's `Value` refuses).
#![no_main]

use libfuzzer_sys::fuzz_target;
use recordwire::json::write_record;
use recordwire::view::DecodeOptions;
use recordwire_fuzz::{check_json, PAYLOADS};

fuzz_target!(|data: &[u8]| {
    let filter = [b"label".to_vec(), Vec::new()];
    for kind in PAYLOADS {
        for (strict, filter) in [(false, None), (true, None), (false, Some(&filter[..]))] {
            let mut out = b"[prefix]".to_vec();
            let result = write_record(&mut out, kind, data, 3, strict, filter);
            let valid = kind.validate(data, 3, DecodeOptions { strict });
            assert_eq!(
                result.is_ok(),
                valid.is_ok(),
                "{kind:?} strict={strict}: {result:?}"
            );
            if result.is_ok() {
                check_json(&out[8..], kind);
            }
        }
    }
});
