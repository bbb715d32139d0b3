//! The annotated wire tree of every payload kind: it never panics, and its
//! last line is an error line (`OFFSET  error: REASON`) exactly when it
//! returns the error, which is the only error line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recordwire::dump::dump_payload;
use recordwire_fuzz::{is_error_line, PAYLOADS};

fuzz_target!(|data: &[u8]| {
    for kind in PAYLOADS {
        let mut out = String::new();
        let result = dump_payload(&mut out, kind, data, 5);
        assert!(out.is_empty() || out.ends_with('\n'), "unterminated line");
        let errors: Vec<&str> = out.lines().filter(|l| is_error_line(l)).collect();
        match result {
            Ok(()) => assert!(errors.is_empty(), "{kind:?}: Ok, but {errors:?}"),
            Err(e) => {
                let last = format!("{:08x}  error: {}", e.offset, e.reason);
                assert_eq!(
                    (errors.len(), out.lines().last()),
                    (1, Some(last.as_str())),
                    "{kind:?}"
                );
            }
        }
    }
});
