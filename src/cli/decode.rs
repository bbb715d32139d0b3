//! `decode`: one bare serialized message (no framing) as one JSON object.

use std::io::Write;
use std::path::Path;

use super::{read_input, CmdResult, Failure, EXIT_DATA};
use crate::error::Error;
use crate::json;
use crate::view::PayloadKind;

/// Runs `decode` on `file` (stdin when `None` or `-`).
pub(super) fn decode(
    file: Option<&Path>,
    payload: PayloadKind,
    strict: bool,
    stdout: &mut dyn Write,
) -> CmdResult {
    let (bytes, name) = read_input(file)?;
    let mut line = Vec::new();
    match json::write_record(&mut line, payload, &bytes, 0, strict, None) {
        Ok(()) => {
            line.push(b'\n');
            stdout.write_all(&line)?;
            Ok(())
        }
        Err(e) => Err(Failure::Fatal(Error::from(e).with_file(name), EXIT_DATA)),
    }
}
