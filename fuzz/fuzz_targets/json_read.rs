//! The JSON reader of `pack` and `encode` over any bytes, for every payload
//! kind. What it accepts and the encoder can write (a tf.Example has no
//! double_list, for one) prints as JSON that reads back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recordwire::json::{read::message_from_json, write_record};
use recordwire_fuzz::PAYLOADS;

fuzz_target!(|data: &[u8]| {
    for kind in PAYLOADS {
        let Ok(message) = message_from_json(kind, data) else {
            continue;
        };
        let mut bytes = Vec::new();
        if message.encode_to(&mut bytes).is_err() {
            continue;
        }
        assert_eq!(
            message.encoded_len().ok(),
            Some(bytes.len()),
            "{kind:?}: encoded_len"
        );
        let mut json = Vec::new();
        write_record(&mut json, kind, &bytes, 0, true, None).expect("the encoding validates");
        let again = message_from_json(kind, &json).expect("printed JSON reads back");
        let mut bytes_again = Vec::new();
        again
            .encode_to(&mut bytes_again)
            .expect("it encoded before");
        assert_eq!(
            bytes_again,
            bytes,
            "{kind:?}: {}",
            String::from_utf8_lossy(&json)
        );
    }
});
