//! The `recordwire` command line (docs/FORMAT.md §9), as library functions over
//! writers: `main` only collects the arguments and exits with the status
//! [`run`] returns.
//!
//! Exit status: 0 on success, 1 when data is invalid or corrupt, 2 on usage
//! errors and when an input cannot be opened. Errors are printed as
//! `error[kind]: file: record N at byte O: details`.

mod args;
mod bench;
mod export;
mod gz;
mod indexed;
mod inspect;
mod payload;
mod progress;
mod write;

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::path::Path;

use clap::Parser;

pub use args::{CatArgs, Cli, Command, ExportFormat, ReadArgs, SpecFormat, WriteArgs};

use crate::error::{Error, ErrorKind};
use crate::frame::{ErrorPolicy, Framing, ReadOptions, Record};
use crate::index::IndexFormat;
use crate::io::{Compression, OpenOptions, Source};
use crate::json;
use crate::view::PayloadKind;

/// Exit status: success.
pub const EXIT_OK: i32 = 0;
/// Exit status: the data is invalid or corrupt.
pub const EXIT_DATA: i32 = 1;
/// Exit status: usage error, or an input that cannot be opened.
pub const EXIT_USAGE: i32 = 2;
/// The kind shown on usage errors (`error[usage_error]: …`, exit 2): a bad
/// option or argument, such as a record id the file does not have. Data
/// errors show their [`crate::ErrorKind`] name and exit 1.
pub const USAGE_ERROR: &str = "usage_error";

/// What a command's failure means for the exit status.
#[derive(Debug)]
pub enum Failure {
    /// Bad data: reported already, exit 1.
    Data,
    /// An error to print, and its exit status.
    Fatal(Error, i32),
    /// The output was closed (e.g. `| head`): stop quietly, exit 0.
    Closed,
    /// A usage error found after parsing: print it, exit 2.
    Usage(String),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Failure::Closed
        } else {
            Failure::Fatal(Error::io(e), EXIT_USAGE)
        }
    }
}

type CmdResult = Result<(), Failure>;

/// Parses `args` (program name first) and runs the command, writing to
/// `stdout` and `stderr`. Returns the exit status.
pub fn run<I, T>(args: I, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let mut text = e.render().to_string();
            if e.use_stderr() {
                // clap's `error: …`, with the kind every error line has.
                if let Some(rest) = text.strip_prefix("error: ") {
                    text = format!("error[{USAGE_ERROR}]: {rest}");
                }
            }
            let _ = if e.use_stderr() {
                stderr.write_all(text.as_bytes())
            } else {
                stdout.write_all(text.as_bytes())
            };
            return code;
        }
    };
    let result = match no_index_among(cli.command.record_files()) {
        Err(e) => Err(e),
        Ok(()) => dispatch(cli.command, stdout, stderr),
    };
    let code = match result {
        Ok(()) => EXIT_OK,
        Err(Failure::Data) => EXIT_DATA,
        Err(Failure::Closed) => EXIT_OK,
        Err(Failure::Usage(m)) => {
            let _ = writeln!(stderr, "error[{USAGE_ERROR}]: {m}");
            EXIT_USAGE
        }
        Err(Failure::Fatal(e, code)) => {
            let _ = writeln!(stderr, "error{e}");
            code
        }
    };
    let _ = stdout.flush();
    code
}

/// Runs one parsed command.
fn dispatch(command: Command, stdout: &mut dyn Write, stderr: &mut dyn Write) -> CmdResult {
    match command {
        Command::Cat {
            files,
            read,
            options,
        } => cat(&files, &read, &options, stdout, stderr),
        Command::Decode {
            file,
            payload,
            strict,
        } => decode(file.as_deref(), payload, strict, stdout),
        Command::Dump {
            files,
            record,
            read,
        } => each_file(&files, |file| dump(file, record, &read, stdout, stderr)),
        Command::Verify { files, read } => verify(&files, &read, stdout, stderr),
        Command::Count { files, read, index } => {
            indexed::count(&files, &read, index.as_deref(), stdout, stderr)
        }
        Command::Index {
            files,
            read,
            format,
            out,
            spacing,
        } => {
            if out.is_some() && files.len() > 1 {
                return Err(Failure::Usage("--out goes with a single file".into()));
            }
            each_file(&files, |file| {
                let out = out.as_deref();
                if format == IndexFormat::Native && gz::is_compressed(file, &read) {
                    gz::index(file, &read, spacing, out, stderr)
                } else {
                    indexed::index(file, &read, format, out, stdout, stderr)
                }
            })
        }
        Command::Order {
            files,
            read,
            index,
            mode,
            seed,
            epoch,
            rank,
            world,
            worker,
            workers,
            page_size,
            window,
            tail,
        } => {
            let spec = crate::order::OrderSpec {
                mode: mode.mode(page_size, window),
                seed,
                rank,
                world,
                worker,
                workers,
                tail,
            };
            indexed::order(&files, &read, index.as_deref(), spec, epoch, stdout, stderr)
        }
        Command::Get {
            file,
            ids,
            ids_file,
            read,
            index,
            features,
        } => {
            let (ids, more): (Vec<String>, Vec<String>) =
                ids.into_iter().partition(|a| args::is_id_word(a));
            if ids.is_empty() && ids_file.is_none() {
                return Err(Failure::Usage(
                    "no record ids: give them after the files, with --ids-file, or - for stdin"
                        .into(),
                ));
            }
            let files: Vec<std::path::PathBuf> = std::iter::once(file)
                .chain(more.into_iter().map(std::path::PathBuf::from))
                .collect();
            // Plain and compressed files alike, each through its index.
            indexed::get(
                &files,
                &indexed::record_ids(&ids, ids_file.as_deref())?,
                &read,
                index.as_deref(),
                features,
                stdout,
                stderr,
            )
        }
        Command::Encode {
            input,
            output,
            payload,
            sorted,
        } => write::encode(
            input.as_deref(),
            output.as_deref(),
            payload,
            sorted,
            stdout,
            stderr,
        ),
        Command::Pack {
            input,
            output,
            framing,
            payload,
            compression,
            sorted,
            pad_to_page,
            gzip_blocks,
        } => write::pack(
            &input,
            &output,
            write::PackOptions {
                framing,
                payload,
                compression,
                sorted,
                pad_to_page,
                gzip_blocks,
            },
            stdout,
            stderr,
        ),
        Command::Convert {
            input,
            output,
            read,
            out_framing,
            out_payload,
            write: w,
            narrow_doubles,
            widen_int32,
        } => write::convert(
            &input,
            &output,
            &read,
            out_framing,
            out_payload,
            &w,
            narrow_doubles,
            widen_int32,
            stdout,
            stderr,
        ),
        Command::Inspect {
            files,
            read,
            spec: true,
            spec_format,
            ..
        } => inspect::inspect_spec(&files, &read, spec_format, stdout, stderr),
        Command::Inspect {
            files, read, json, ..
        } => each_file(&files, |file| {
            inspect::inspect(file, &read, json, stdout, stderr)
        }),
        Command::Export {
            inputs,
            out,
            spec,
            format,
            batch_size,
            threads,
            force,
            read,
        } => export::export(
            &export::ExportOptions {
                inputs: &inputs,
                out: &out,
                spec: &spec,
                format,
                batch_size: usize::try_from(batch_size).unwrap_or(usize::MAX),
                threads: threads.map(|t| usize::try_from(t).unwrap_or(1)),
                force,
                read: &read,
            },
            stderr,
        ),
        Command::Bench {
            file,
            read,
            index,
            passes,
            samples,
            seed,
            json,
        } => bench::bench(
            &file,
            &read,
            &bench::BenchOptions {
                index: index.as_deref(),
                passes,
                samples,
                seed,
                json,
            },
            stdout,
            stderr,
        ),
    }
}

/// Runs `command` on each file in turn; stops at the first that fails.
fn each_file(
    files: &[std::path::PathBuf],
    mut command: impl FnMut(&Path) -> CmdResult,
) -> CmdResult {
    files.iter().try_for_each(|file| command(file))
}

/// Refuses an index file given where a record file is expected, naming it
/// and its format (an index of a dataset's files is easy to catch in a
/// shell glob such as `train-*`).
fn no_index_among<'p>(files: impl IntoIterator<Item = &'p Path>) -> Result<(), Failure> {
    for path in files {
        if path == Path::new("-") {
            continue;
        }
        if let Some(format) = crate::index::index_file_at(path) {
            return Err(Failure::Usage(format!(
                "{}: this is an index file ({format}), not a record file; give an index with --index",
                path.display()
            )));
        }
    }
    Ok(())
}

/// The next record of a walk that stops at the first error: the error is
/// printed and becomes [`Failure::Data`].
pub(crate) fn next_or_fail<'s>(
    source: &'s mut Source,
    stderr: &mut dyn Write,
) -> Result<Option<Record<'s>>, Failure> {
    match source.next_record() {
        None => Ok(None),
        Some(Ok(record)) => Ok(Some(record)),
        Some(Err(e)) => {
            report(stderr, &e);
            Err(Failure::Data)
        }
    }
}

/// Prints an error as docs/FORMAT.md §8.2 shows it.
pub(crate) fn report(stderr: &mut dyn Write, e: &Error) {
    let _ = writeln!(stderr, "error{e}");
}

impl ReadArgs {
    pub(crate) fn open_options(&self, policy: ErrorPolicy) -> OpenOptions {
        OpenOptions {
            framing: self.framing.get(),
            compression: self.compression,
            mmap: !self.no_mmap,
            read: ReadOptions::default()
                .with_data_crc(!self.no_data_crc)
                .with_policy(policy),
        }
    }

    /// Opens `path`; an input that cannot be opened is a fatal error.
    pub(crate) fn open(&self, path: &Path, policy: ErrorPolicy) -> Result<Source, Failure> {
        Source::open(path, &self.open_options(policy)).map_err(|e| Failure::Fatal(e, EXIT_USAGE))
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

fn cat(
    files: &[std::path::PathBuf],
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
    let filter: Option<Vec<Vec<u8>>> = o
        .features
        .clone()
        .map(|v| v.into_iter().map(String::into_bytes).collect());
    let mut found = vec![false; filter.as_ref().map_or(0, Vec::len)];
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
        let mut notes = payload::Notes::new(chosen);
        let walk = CatWalk {
            payload: chosen.kind,
            strict: read.strict,
            on_error: o.on_error,
            max_errors: o.max_errors,
            filter: filter.as_deref(),
            with_id: o.with_id,
        };
        let r = walk.file(
            &mut source,
            &mut out,
            &mut notes,
            &mut position,
            &mut found,
            stderr,
        );
        // Once per file, however the walk ended (a closed output too).
        notes.finish(source.name(), stderr);
        skipped += r?;
    }
    out.flush()?;
    let mut missing = false;
    for (name, seen) in o.features.iter().flatten().zip(&found) {
        if !seen {
            missing = true;
            let _ = writeln!(
                stderr,
                "{}: no record printed has a feature named {}",
                if read.strict {
                    "error[usage_error]"
                } else {
                    "note"
                },
                crate::names::quoted(name.as_bytes())
            );
        }
    }
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
struct CatWalk<'f> {
    payload: PayloadKind,
    strict: bool,
    on_error: ErrorPolicy,
    max_errors: Option<u64>,
    filter: Option<&'f [Vec<u8>]>,
    with_id: bool,
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
        found: &mut [bool],
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
                    if let Some(filter) = self.filter {
                        mark_found(self.payload, &record, filter, found);
                    }
                    match json::write_record(
                        &mut line,
                        self.payload,
                        record.data,
                        record.data_offset,
                        self.strict,
                        self.filter,
                    ) {
                        Ok(()) => {
                            notes.record(record.id, record.data, record.data_offset);
                            line.push(b'\n');
                            out.write_all(&line)?;
                            progress.update(record.end);
                            if let Some(left) = &mut position.left {
                                *left -= 1;
                            }
                            continue;
                        }
                        Err(e) => {
                            notes.bad(record.id);
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

/// Marks the names of `filter` that `record` has (as a feature, or a
/// SequenceExample's feature list).
fn mark_found(kind: PayloadKind, record: &Record<'_>, filter: &[Vec<u8>], found: &mut [bool]) {
    let payload = crate::view::PayloadRef::new(kind, record.data, record.data_offset);
    for (name, seen) in filter.iter().zip(found.iter_mut()) {
        if *seen {
            continue;
        }
        let in_features = payload
            .features()
            .is_some_and(|f| f.get(name).ok().flatten().is_some());
        let in_lists = payload
            .feature_lists()
            .is_some_and(|l| l.get(name).ok().flatten().is_some());
        *seen = in_features || in_lists;
    }
}

pub(crate) fn read_input(file: Option<&Path>) -> Result<(Vec<u8>, String), Failure> {
    let mut buf = Vec::new();
    match file {
        None => {
            io::stdin().read_to_end(&mut buf)?;
            Ok((buf, "-".into()))
        }
        Some(p) if p == Path::new("-") => {
            io::stdin().read_to_end(&mut buf)?;
            Ok((buf, "-".into()))
        }
        Some(p) => {
            let name = p.display().to_string();
            let buf = std::fs::read(p)
                .map_err(|e| Failure::Fatal(Error::io(e).with_file(name.as_str()), EXIT_USAGE))?;
            Ok((buf, name))
        }
    }
}

fn decode(
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

fn dump(
    path: &Path,
    only: Option<u64>,
    read: &ReadArgs,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    use std::fmt::Write as _;
    let (mut source, chosen) = read.open_with_payload(path, ErrorPolicy::Fail, stderr)?;
    let framing = source.framing();
    let payload = chosen.kind;
    let _ = writeln!(
        stdout,
        "# {}: {} frames{}, {} payloads",
        source.name(),
        framing.name(),
        match source.compression() {
            Compression::None | Compression::Auto => String::new(),
            c => format!(
                " in a {} stream (offsets are in the decompressed stream)",
                c.name()
            ),
        },
        payload.name()
    );
    let mut text = String::new();
    let mut found = false;
    while let Some(record) = next_or_fail(&mut source, stderr)? {
        if only.is_some_and(|n| n != record.id) {
            continue;
        }
        found = true;
        text.clear();
        let len = record.data.len() as u64;
        let _ = writeln!(
            text,
            "\n# record {} at byte {}: {} bytes of data at byte {}",
            record.id, record.offset, len, record.data_offset
        );
        let le = len.to_le_bytes();
        let hex = |b: &[u8]| {
            b.iter()
                .map(|x| format!("{x:02x}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = writeln!(text, "{:08x}  {:<23} length {len}", record.offset, hex(&le));
        if framing == Framing::TfRecord {
            let _ = writeln!(
                text,
                "{:08x}  {:<23} length crc {:#010x}",
                record.offset + 8,
                hex(&crate::frame::masked_crc32c(&le).to_le_bytes()),
                crate::frame::masked_crc32c(&le)
            );
        }
        let r = crate::dump::dump_payload(&mut text, payload, record.data, record.data_offset);
        if framing == Framing::TfRecord {
            let crc = crate::frame::masked_crc32c(record.data);
            let _ = writeln!(
                text,
                "{:08x}  {:<23} data crc {:#010x}",
                record.data_offset + len,
                hex(&crc.to_le_bytes()),
                crc
            );
        }
        stdout.write_all(text.as_bytes())?;
        if let Err(e) = r {
            report(stderr, &record.context(e));
            return Err(Failure::Data);
        }
        if only.is_some() {
            break;
        }
    }
    if let Some(n) = only {
        if !found {
            return Err(Failure::Usage(format!(
                "{}: no record {n} (the file has {} records)",
                source.name(),
                source.next_id()
            )));
        }
    }
    Ok(())
}

fn verify(
    files: &[std::path::PathBuf],
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
