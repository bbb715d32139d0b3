//! The `recordwire` command line (docs/FORMAT.md §9), as library functions over
//! writers: `main` only collects the arguments and exits with the status
//! [`run`] returns.
//!
//! Exit status: 0 on success, 1 when data is invalid or corrupt, 2 on usage
//! errors and when an input cannot be opened. Errors are printed as
//! `error[kind]: file: record N at byte O: details`.

mod args;
mod bench;
mod cat;
mod decode;
mod dump;
mod export;
mod filter;
mod gz;
mod import;
mod indexed;
mod indexing;
mod inputs;
mod inspect;
mod inspect_schema;
mod output;
mod payload;
mod progress;
mod schema_args;
mod stat;
mod verify;
mod write;

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::path::Path;

use clap::Parser;

pub use args::{
    BenchCommand, CatArgs, CatCommand, Cli, Command, ConvertCommand, CountCommand, DecodeCommand,
    DumpCommand, EncodeCommand, ExportCommand, ExportFormat, GetCommand, ImportCommand,
    IndexCommand, InspectCommand, OrderCommand, PackCommand, ReadArgs, SchemaArgs, SchemaSource,
    SpecFormat, StoreArgs, VerifyCommand, WriteArgs,
};

use crate::error::Error;
use crate::frame::{ErrorPolicy, ReadOptions, Record};
use crate::io::{OpenOptions, Source};

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
    let mut command = cli.command;
    #[cfg(feature = "remote")]
    progress::observe_remote_fetches();
    #[cfg(feature = "remote")]
    progress::note_remote_waits();
    #[cfg(feature = "remote")]
    let expanded = inputs::expand_remote_globs(&mut command);
    #[cfg(not(feature = "remote"))]
    let expanded = Ok(());
    let result = expanded
        .and_then(|()| inputs::pass_over_index_files(&mut command, stderr))
        .and_then(|()| dispatch(command, stdout, stderr));
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

/// Runs one parsed command: one call per command, each in its own module.
fn dispatch(command: Command, stdout: &mut dyn Write, stderr: &mut dyn Write) -> CmdResult {
    match command {
        Command::Cat(c) => cat::cat(&c.files, &c.read, &c.options, stdout, stderr),
        Command::Decode(c) => decode::decode(c.file.as_deref(), c.payload, c.strict, stdout),
        Command::Dump(c) => {
            let schema = c.schema.load()?;
            each_file(&c.files, |file| {
                dump::dump(file, c.record, &c.read, schema.as_ref(), stdout, stderr)
            })
        }
        Command::Verify(c) => verify::verify(&c.files, &c.read, threads(c.threads), stdout, stderr),
        Command::Count(c) => indexed::count(
            &c.files,
            &c.read,
            c.index.as_deref(),
            threads(c.threads),
            stdout,
            stderr,
        ),
        Command::Index(c) => indexing::index(&c, stdout, stderr),
        Command::Get(c) => indexing::get(c, stdout, stderr),
        Command::Order(c) => indexing::order(&c, stdout, stderr),
        Command::Inspect(c) => inspect::run(&c, stdout, stderr),
        Command::Encode(c) => write::encode(&c, stdout, stderr),
        Command::Pack(c) => write::pack(c, stdout, stderr),
        Command::Convert(c) => write::convert(&c, stdout, stderr),
        Command::Export(c) => export::run(&c, stderr),
        Command::Import(c) => import::run(&c, stdout, stderr),
        Command::Bench(c) => bench::run(&c, stdout, stderr),
    }
}

/// `--threads`, or the number of cores.
pub(crate) fn threads(asked: Option<u64>) -> usize {
    match asked {
        Some(n) => usize::try_from(n).unwrap_or(1),
        None => std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
    }
}

/// Runs `command` on each file in turn; stops at the first that fails.
fn each_file(
    files: &[std::path::PathBuf],
    mut command: impl FnMut(&Path) -> CmdResult,
) -> CmdResult {
    files.iter().try_for_each(|file| command(file))
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

/// Writes the index file `bytes` at `out` ([`crate::io::write_whole`]).
pub(crate) fn write_index_file(
    out: &Path,
    bytes: Vec<u8>,
    options: &OpenOptions,
) -> Result<(), Error> {
    crate::io::write_whole(out, bytes, options)
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
            #[cfg(feature = "remote")]
            storage: crate::io::remote::StorageOptions::new(self.storage_option.iter().cloned()),
        }
    }

    /// Opens `path`; an input that cannot be opened is a fatal error.
    pub(crate) fn open(&self, path: &Path, policy: ErrorPolicy) -> Result<Source, Failure> {
        Source::open(path, &self.open_options(policy)).map_err(|e| Failure::Fatal(e, EXIT_USAGE))
    }
}

/// The bytes of `file`, or of stdin when it is `None` or `-`, and the name
/// to show for them.
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
