//! `verify`: every frame, CRC and payload checked; one line per problem and
//! a summary line per file.
//!
//! A file held in memory is checked on `--threads` threads
//! ([`crate::frame::walk_split`]), reported in file order exactly as one
//! thread reports it.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::PathBuf;

use super::{payload, progress, CmdResult, Failure, ReadArgs};
use crate::error::Error;
use crate::frame::{shift_record, ErrorPolicy, PartVisitor, Record, Split};
use crate::view::{DecodeOptions, PayloadKind};

/// Runs `verify` over `files` on `threads` threads; exit 1 when any file
/// has a problem.
pub(super) fn verify(
    files: &[PathBuf],
    read: &ReadArgs,
    threads: usize,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    let mut bad = false;
    for path in files {
        // Pad frames are seen, to be counted.
        let mut open = read.open_options(ErrorPolicy::Skip { max_errors: None });
        open.read.skip_pads = false;
        let (mut source, chosen) = read.open_payload(path, &open, stderr)?;
        let options = DecodeOptions {
            strict: read.strict,
        };
        let progress = progress::Progress::over("verifying", &source);
        let make = || Checked::new(chosen.kind, options, payload::Notes::new(chosen));
        let mut total = make();
        let mut written = Ok(());
        source.walk_split(Split::threads(threads), make, |part, shift, end| {
            progress.update(end.end);
            written = total.absorb(part, shift, stdout);
            match written {
                Ok(()) => ControlFlow::Continue(()),
                Err(_) => ControlFlow::Break(()),
            }
        });
        progress.finish();
        total.notes.finish(source.name(), stderr);
        written?;
        let (ok, problems, pads) = (total.ok, total.problems, total.pads);
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

/// What checking the records of a part of a file (or the whole file) found.
struct Checked {
    payload: PayloadKind,
    options: DecodeOptions,
    /// Valid records, problems and pad frames.
    ok: u64,
    problems: u64,
    pads: u64,
    /// The problems, in file order, waiting to be printed (ids counted from
    /// the part's first frame).
    errors: Vec<Error>,
    notes: payload::Notes,
}

impl Checked {
    fn new(payload: PayloadKind, options: DecodeOptions, notes: payload::Notes) -> Self {
        Checked {
            payload,
            options,
            ok: 0,
            problems: 0,
            pads: 0,
            errors: Vec::new(),
            notes,
        }
    }

    /// Adds the next part's findings, its ids moved by `shift`, and prints
    /// its problems.
    fn absorb(&mut self, part: Checked, shift: u64, stdout: &mut dyn Write) -> Result<(), Failure> {
        self.ok += part.ok;
        self.problems += part.problems;
        self.pads += part.pads;
        self.notes.absorb(part.notes, shift);
        for problem in part.errors {
            writeln!(stdout, "error{}", shift_record(problem, shift))?;
        }
        Ok(())
    }
}

impl PartVisitor for Checked {
    fn visit(&mut self, item: Result<Record<'_>, Error>) {
        let problem = match item {
            Ok(record) if crate::frame::is_pad(record.data) => {
                self.pads += 1;
                return;
            }
            Ok(record) => match self
                .payload
                .validate(record.data, record.data_offset, self.options)
            {
                Ok(()) => {
                    self.notes
                        .record(record.id, record.data, record.data_offset);
                    self.ok += 1;
                    return;
                }
                Err(e) => {
                    self.notes.bad(record.id, record.data);
                    record.context(e)
                }
            },
            Err(e) => e,
        };
        self.problems += 1;
        self.errors.push(problem);
    }
}
