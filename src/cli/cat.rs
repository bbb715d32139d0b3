//! `cat`: every record as one line of JSON, over all the files in order,
//! with `--skip`/`--limit`, `--features`, `--with-id` and `--on-error skip`.

use std::io::{self, Write};
use std::path::PathBuf;

use super::filter::Wanted;
use super::{payload, progress, report, CatArgs, CmdResult, Failure, ReadArgs};
use crate::error::{Error, ErrorKind};
use crate::frame::ErrorPolicy;
use crate::io::Source;
use crate::schema::{JsonOptions, Schema};
use crate::view::PayloadKind;

/// Runs `cat` over `files`, one after the other.
pub(super) fn cat(
    files: &[PathBuf],
    read: &ReadArgs,
    o: &CatArgs,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    let policy = match o.on_error {
        ErrorPolicy::Fail => ErrorPolicy::Fail,
        ErrorPolicy::Skip { .. } => ErrorPolicy::Skip {
            max_errors: o.max_errors,
        },
    };
    let schema = o.schema.load(o.features.is_some())?;
    let mut wanted = Wanted::new(o.features.as_deref());
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout);
    let mut skipped = 0u64;
    let mut position = Position {
        to_skip: o.skip,
        left: o.limit,
    };
    for path in files {
        if position.left == Some(0) {
            break;
        }
        let (mut source, chosen) = read.open_with_payload(path, policy, stderr)?;
        // --features picks tf.Example features: no detected message then.
        let chosen = match o.features {
            Some(_) => chosen.without_message(),
            None => chosen,
        };
        let mut notes = payload::Notes::new(chosen);
        let detected = o
            .schema
            .detected(schema.as_ref(), &chosen, source.name(), stderr)?;
        let walk = CatWalk {
            payload: chosen.kind,
            strict: read.strict,
            on_error: o.on_error,
            max_errors: o.max_errors,
            with_id: o.with_id,
            schema: schema.as_ref().or(detected.as_ref()),
        };
        let r = walk.file(
            &mut source,
            &mut out,
            &mut notes,
            &mut position,
            wanted.as_mut(),
            stderr,
        );
        // Once per file, however the walk ended (a closed output too).
        notes.finish(source.name(), stderr);
        skipped += r?;
    }
    out.flush()?;
    let missing = wanted
        .as_ref()
        .is_some_and(|w| w.finish(read.strict, stderr));
    // Damage is reported with exit 1 in skip mode too: a script learns from
    // the status that records were passed over.
    if skipped > 0 || (missing && read.strict) {
        return Err(Failure::Data);
    }
    Ok(())
}

/// Where `cat` is in the records of all its files: how many to pass over,
/// how many more to print.
struct Position {
    to_skip: u64,
    left: Option<u64>,
}

/// How `cat` prints the records of one file.
struct CatWalk<'s> {
    payload: PayloadKind,
    strict: bool,
    on_error: ErrorPolicy,
    max_errors: Option<u64>,
    with_id: bool,
    /// Records of a message given at run time (`--message`), not of `payload`.
    schema: Option<&'s (Schema, JsonOptions)>,
}

impl CatWalk<'_> {
    /// Prints the records of `source`; returns the number of errors that
    /// were reported and skipped.
    fn file(
        &self,
        source: &mut Source,
        out: &mut dyn Write,
        notes: &mut payload::Notes,
        position: &mut Position,
        mut wanted: Option<&mut Wanted>,
        stderr: &mut dyn Write,
    ) -> Result<u64, Failure> {
        let mut line = Vec::with_capacity(1 << 12);
        let mut skipped = 0u64;
        let mut decode_errors = 0u64;
        let progress = progress::Progress::over("reading", source);
        loop {
            if position.left == Some(0) {
                break;
            }
            let item = source.next_record();
            let err = match item {
                None => break,
                Some(Ok(_)) if position.to_skip > 0 => {
                    position.to_skip -= 1;
                    continue;
                }
                Some(Ok(record)) => {
                    line.clear();
                    if self.with_id {
                        line.extend_from_slice(record.file.map_or(&b""[..], |f| f.as_bytes()));
                        line.push(b'\t');
                        // Into the reused line: no allocation per record.
                        let _ = write!(line, "{}", record.id);
                        line.push(b'\t');
                    }
                    if let Some(w) = wanted.as_deref_mut() {
                        w.mark(self.payload, &record);
                    }
                    let written = super::schema_args::write_json(
                        self.schema,
                        &mut line,
                        self.payload,
                        &record,
                        self.strict,
                        wanted.as_deref().map(Wanted::names),
                    );
                    match written {
                        Ok(()) => {
                            if self.schema.is_none() {
                                notes.record(record.id, record.data, record.data_offset);
                            }
                            line.push(b'\n');
                            out.write_all(&line)?;
                            progress.update(record.end);
                            if let Some(left) = &mut position.left {
                                *left -= 1;
                            }
                            continue;
                        }
                        Err(e) => {
                            if self.schema.is_none() {
                                notes.bad(record.id, record.data);
                            }
                            let err = Error::from(e).with_record(record.id);
                            decode_errors += 1;
                            err
                        }
                    }
                }
                Some(Err(e)) => e,
            };
            let err = if err.file().is_none() {
                err.with_file(source.name())
            } else {
                err
            };
            skipped += 1;
            out.flush()?;
            report(stderr, &err);
            if self.on_error == ErrorPolicy::Fail {
                return Err(Failure::Data);
            }
            if matches!(err.kind(), ErrorKind::Decode(_)) {
                if self
                    .max_errors
                    .is_some_and(|m| decode_errors + source.errors() >= m)
                {
                    let _ = writeln!(
                        stderr,
                        "{}: gave up after {} errors",
                        source.name(),
                        decode_errors + source.errors()
                    );
                    return Err(Failure::Data);
                }
            } else if let Some((start, end)) = source.skipped() {
                let _ = writeln!(stderr, "{}: skipped bytes {start}..{end}", source.name());
            }
        }
        if gave_up(source, self.max_errors, stderr) {
            return Err(Failure::Data);
        }
        Ok(skipped)
    }
}

/// Says on stderr why a skipping walk stopped early, if it did.
/// Whether it did.
fn gave_up(source: &Source, max_errors: Option<u64>, stderr: &mut dyn Write) -> bool {
    if let Some(max) = max_errors {
        if source.errors() >= max {
            let _ = writeln!(
                stderr,
                "{}: gave up after {} errors (--max-errors {max})",
                source.name(),
                source.errors()
            );
            return true;
        }
    }
    false
}
