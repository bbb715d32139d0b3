//! `verify`: every frame, CRC and payload checked; one line per problem and
//! a summary line per file.

use std::io::Write;
use std::path::PathBuf;

use super::{payload, progress, CmdResult, Failure, ReadArgs};
use crate::frame::ErrorPolicy;
use crate::io::Source;
use crate::view::PayloadKind;

/// Runs `verify` over `files`; exit 1 when any file has a problem.
pub(super) fn verify(
    files: &[PathBuf],
    read: &ReadArgs,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    let mut bad = false;
    for path in files {
        // Pad frames are seen, to be counted.
        let mut open = read.open_options(ErrorPolicy::Skip { max_errors: None });
        open.read.skip_pads = false;
        let (mut source, chosen) = read.open_payload(path, &open, stderr)?;
        let mut notes = payload::Notes::new(chosen);
        let r = verify_file(&mut source, chosen.kind, read.strict, &mut notes, stdout);
        notes.finish(source.name(), stderr);
        let (ok, problems, pads) = r?;
        if problems > 0 {
            bad = true;
        }
        let padding = if pads > 0 {
            format!(
                ", {pads} pad frame{} (recordwire passes over them; other readers see empty records)",
                if pads == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            stderr,
            "{}: {ok} valid record{}, {problems} problem{}{padding}",
            source.name(),
            if ok == 1 { "" } else { "s" },
            if problems == 1 { "" } else { "s" }
        );
    }
    if bad {
        Err(Failure::Data)
    } else {
        Ok(())
    }
}

/// Checks every record of `source`, printing one line per problem; returns
/// the numbers of valid records, of problems and of pad frames.
fn verify_file(
    source: &mut Source,
    payload: PayloadKind,
    strict: bool,
    notes: &mut payload::Notes,
    stdout: &mut dyn Write,
) -> Result<(u64, u64, u64), Failure> {
    let options = crate::view::DecodeOptions { strict };
    let (mut ok, mut problems, mut pads) = (0u64, 0u64, 0u64);
    let progress = progress::Progress::over("verifying", source);
    loop {
        let problem = match source.next_record() {
            None => break,
            Some(Ok(record)) if crate::frame::is_pad(record.data) => {
                pads += 1;
                continue;
            }
            Some(Ok(record)) => match payload.validate(record.data, record.data_offset, options) {
                Ok(()) => {
                    progress.update(record.end);
                    notes.record(record.id, record.data, record.data_offset);
                    ok += 1;
                    continue;
                }
                Err(e) => {
                    notes.bad(record.id);
                    record.context(e)
                }
            },
            Some(Err(e)) => e,
        };
        problems += 1;
        writeln!(stdout, "error{problem}")?;
    }
    Ok((ok, problems, pads))
}
