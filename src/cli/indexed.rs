//! The commands that use an offset index: `index`, `get` and `count`.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::filter::Wanted;
use super::schema_args::Loaded;
use super::{report, CmdResult, Failure, ReadArgs, EXIT_USAGE};
use crate::dataset::{Dataset, IndexOrigin, Shard};
use crate::error::Error;
use crate::frame::{shift_record, ErrorPolicy, PartVisitor, Record, Split};
use crate::index::{sidecar_path, Index, IndexFormat};
use crate::io::{OpenOptions, RecordFile, Source};
use crate::schema::{JsonOptions, Schema};

pub(super) fn fatal(e: Error) -> Failure {
    Failure::Fatal(e, EXIT_USAGE)
}

/// A data error (printed, exit 1) or an unopenable input or a usage error
/// (exit 2).
pub(super) fn data_or_fatal(e: Error, stderr: &mut dyn Write) -> Failure {
    match e.kind() {
        crate::ErrorKind::Io { .. } | crate::ErrorKind::Usage { .. } => fatal(e),
        _ => {
            report(stderr, &e);
            Failure::Data
        }
    }
}

/// Opens every file with `open`, then notes on stderr each sidecar that was
/// passed over (`note`); the first file that cannot be opened ends it, as a
/// data error or an unopenable input ([`data_or_fatal`]).
pub(super) fn open_each<S>(
    files: &[PathBuf],
    open: impl Fn(&Path) -> Result<S, Error>,
    note: fn(&S, &mut dyn Write),
    stderr: &mut dyn Write,
) -> Result<Vec<S>, Failure> {
    let shards = files
        .iter()
        .map(|path| open(path))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| data_or_fatal(e, stderr))?;
    for shard in &shards {
        note(shard, stderr);
    }
    Ok(shards)
}

/// Says on stderr that a sidecar index was passed over, and why (the index
/// was then built in memory: slower, but right).
pub(super) fn note_rejected_sidecar(shard: &Shard, stderr: &mut dyn Write) {
    if let IndexOrigin::Built {
        rejected: Some(why),
    } = shard.origin()
    {
        let _ =
            writeln!(
            stderr,
            "note: {}: the sidecar index was not used ({why}): the {}index was built in memory{}",
            shard.name(),
            if shard.is_compressed() { "checkpoint " } else { "" },
            if shard.is_compressed() { " (`recordwire index` writes it)" } else { "" },
        );
    }
}

/// Opens `path` (plain or compressed) with its index: `--index` when
/// given, else the current sidecar, else one built in memory.
pub(super) fn open_shard(
    path: &Path,
    read: &ReadArgs,
    index: Option<&Path>,
) -> Result<Shard, Error> {
    let options: OpenOptions = read.open_options(ErrorPolicy::Fail);
    Shard::open_with(path, &options, index)
}

pub(super) fn count(
    files: &[PathBuf],
    read: &ReadArgs,
    index: Option<&Path>,
    threads: usize,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    if index.is_some() && files.len() > 1 {
        return Err(Failure::Usage("--index goes with a single file".into()));
    }
    let mut total = 0u64;
    for path in files {
        let (n, name) = match index {
            Some(_) => {
                let shard = open_shard(path, read, index).map_err(|e| data_or_fatal(e, stderr))?;
                (shard.len(), shard.name().to_owned())
            }
            None => {
                let n = match current_sidecar(path, read, stderr) {
                    Some(n) => n,
                    None => {
                        let mut source = read.open(path, ErrorPolicy::Fail)?;
                        count_by_reading(&mut source, threads, stderr)?
                    }
                };
                let name = if path == Path::new("-") {
                    crate::io::STDIN_NAME.to_owned()
                } else {
                    path.display().to_string()
                };
                (n, name)
            }
        };
        total += n;
        if files.len() > 1 {
            writeln!(stdout, "{n}\t{name}")?;
        } else {
            writeln!(stdout, "{n}")?;
        }
    }
    if files.len() > 1 {
        writeln!(stdout, "{total}\ttotal")?;
    }
    Ok(())
}

/// The record count of `path` from its current sidecar (a native index of
/// a plain file, a checkpoint index of a compressed one), when it has one;
/// a sidecar that does not belong to the data is passed over with a note on
/// stderr.
fn current_sidecar(path: &Path, read: &ReadArgs, stderr: &mut dyn Write) -> Option<u64> {
    let options = read.open_options(ErrorPolicy::Fail);
    match Shard::open_sidecar(path, &options) {
        Ok(shard) => shard.map(|s| s.len()),
        // The data itself cannot be opened (a remote object that is not
        // there): reading it says so, once.
        Err(e) if e.file() == Some(path.display().to_string().as_str()) => None,
        Err(e) => {
            let _ = writeln!(
                stderr,
                "note: {}: not used ({e}): counting by reading the file",
                sidecar_path(path).display()
            );
            None
        }
    }
}

/// Counts the records of `source` by walking it, as `verify` does: both CRCs
/// checked (unless `--no-data-crc`), in constant memory for streams; the
/// first damage is reported where the other commands report it.
fn count_by_reading(
    source: &mut Source,
    threads: usize,
    stderr: &mut dyn Write,
) -> Result<u64, Failure> {
    let (mut n, mut first_error) = (0u64, None);
    source.walk_split(
        Split::threads(threads),
        Counted::default,
        |part, shift, _| {
            n += part.records;
            match part.error {
                Some(e) => {
                    first_error = Some(shift_record(e, shift));
                    ControlFlow::Break(())
                }
                None => ControlFlow::Continue(()),
            }
        },
    );
    match first_error {
        Some(e) => Err(data_or_fatal(e, stderr)),
        None => Ok(n),
    }
}

/// The records of a part of a file (the walk fails at its first error).
#[derive(Default)]
struct Counted {
    records: u64,
    error: Option<Error>,
}

impl PartVisitor for Counted {
    fn visit(&mut self, item: Result<Record<'_>, Error>) {
        match item {
            Ok(_) => self.records += 1,
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }
}

pub(super) fn index(
    path: &Path,
    read: &ReadArgs,
    format: IndexFormat,
    out: Option<&Path>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    let options = read.open_options(ErrorPolicy::Fail);
    let file = RecordFile::open(path, &options).map_err(fatal)?;
    let progress = super::progress::Progress::new("indexing", Some(file.len() as u64));
    let built = Index::build_with_progress(
        file.bytes(),
        file.framing(),
        options.read.check_data_crc,
        |done| progress.update(done),
    );
    progress.finish();
    let index = built
        .map_err(|e| file.explain(e).with_file(file.name()))
        .map_err(|e| data_or_fatal(e, stderr))?;
    let out: PathBuf = match out {
        Some(p) => p.to_path_buf(),
        None => match format {
            IndexFormat::Native => sidecar_path(path),
            IndexFormat::Dali => PathBuf::from(format!("{}.idx", path.display())),
            IndexFormat::Lirs => PathBuf::from(format!("{}.offsets", path.display())),
        },
    };
    let to_stdout = out == Path::new("-");
    let mut buf = Vec::new();
    let written = match (format, to_stdout) {
        (IndexFormat::Native, _) => index
            .write_native(&mut buf)
            .map_err(|e| Error::io(e).with_file(out.display().to_string())),
        (f, _) => index.write_as(f, file.bytes(), &mut buf),
    };
    written.map_err(fatal)?;
    if to_stdout {
        stdout.write_all(&buf)?;
    } else {
        super::write_index_file(&out, buf, &options).map_err(fatal)?;
    }
    if !to_stdout {
        let _ = writeln!(
            stderr,
            "{}: {} records indexed into {} ({})",
            file.name(),
            index.len(),
            out.display(),
            format.name()
        );
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
/// The ids of `get`: the arguments (`-` for those on stdin), then those of
/// `ids_file`; each separated by white space in a file or stdin.
pub(super) fn record_ids(args: &[String], ids_file: Option<&Path>) -> Result<Vec<u64>, Failure> {
    let mut ids = Vec::new();
    let mut parse = |word: &str, from: &str| {
        word.parse::<u64>().map(|id| ids.push(id)).map_err(|_| {
            Failure::Usage(format!(
                "{from}: `{word}` is not a record id (a whole number from 0)"
            ))
        })
    };
    let read_all = |path: &Path| {
        let text = if path == Path::new("-") {
            std::io::read_to_string(std::io::stdin().lock())
        } else {
            std::fs::read_to_string(path)
        };
        text.map_err(|e| fatal(Error::io(e).with_file(path.display().to_string())))
    };
    for arg in args {
        if arg == "-" {
            for word in read_all(Path::new("-"))?.split_whitespace() {
                parse(word, "stdin")?;
            }
        } else {
            parse(arg, "argument")?;
        }
    }
    if let Some(path) = ids_file {
        let from = path.display().to_string();
        for word in read_all(path)?.split_whitespace() {
            parse(word, &from)?;
        }
    }
    Ok(ids)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn get(
    files: &[PathBuf],
    ids: &[u64],
    read: &ReadArgs,
    index: Option<&Path>,
    features: Option<Vec<String>>,
    args: &super::SchemaArgs,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    if index.is_some() && files.len() > 1 {
        return Err(Failure::Usage("--index goes with a single file".into()));
    }
    let schema = args.load(features.is_some())?;
    let mut shards = open_each(
        files,
        |path| open_shard(path, read, index),
        note_rejected_sidecar,
        stderr,
    )?;
    if shards.is_empty() {
        return Err(Failure::Usage("no record file".into()));
    }
    // Each shard's records are read as its own payload.
    let chosen: Vec<_> = shards
        .iter_mut()
        .map(|shard| {
            let chosen = read.payload_of_shard(shard, stderr);
            // --features picks tf.Example features: no detected message then.
            if features.is_none() {
                return chosen;
            }
            let chosen = chosen.without_message();
            shard.set_payload(chosen.kind);
            chosen
        })
        .collect();
    let detected = chosen
        .iter()
        .zip(&shards)
        .map(|(c, shard)| args.detected(schema.as_ref(), c, shard.name(), stderr))
        .collect::<Result<Vec<_>, _>>()?;
    let mut wanted = Wanted::new(features.as_deref());
    let dataset = Dataset::from_shards(shards);
    let name = match dataset.shards() {
        [one] => one.name().to_string(),
        many => format!("{} files", many.len()),
    };
    let mut notes: Vec<_> = chosen.into_iter().map(super::payload::Notes::new).collect();
    let mut out = std::io::BufWriter::new(stdout);
    let r = get_records(
        &dataset,
        &name,
        ids,
        read.strict,
        wanted.as_mut(),
        (schema.as_ref(), &detected),
        &mut out,
        &mut notes,
        stderr,
    );
    for (shard, notes) in dataset.shards().iter().zip(&notes) {
        notes.finish(shard.name(), stderr);
    }
    r?;
    out.flush()?;
    // As `cat`: a name no record printed has (a typo) is said; with
    // --strict it is an error.
    if wanted.is_some_and(|w| w.finish(read.strict, stderr)) && read.strict {
        return Err(Failure::Data);
    }
    Ok(())
}

/// `get` of an id past the end of `files` files holding `len` records
/// (`name` in the message).
pub(super) fn no_record(name: &str, id: u64, files: usize, len: u64) -> Failure {
    let what = if files == 1 { "file" } else { "dataset" };
    Failure::Usage(format!(
        "{name}: no record {id} (the {what} has {len} records)"
    ))
}

/// Prints the records `ids` of `dataset` (`name` in messages).
#[allow(clippy::too_many_arguments)]
fn get_records(
    dataset: &Dataset,
    name: &str,
    ids: &[u64],
    strict: bool,
    mut wanted: Option<&mut Wanted>,
    (schema, detected): (Option<&Loaded>, &[Option<Loaded>]),
    out: &mut dyn Write,
    notes: &mut [super::payload::Notes],
    stderr: &mut dyn Write,
) -> CmdResult {
    let mut line = Vec::new();
    for &id in ids {
        let record = match dataset.get(id) {
            Ok(Some(r)) => r,
            Ok(None) => {
                out.flush()?;
                return Err(no_record(name, id, dataset.shards().len(), dataset.len()));
            }
            Err(e) => {
                out.flush()?;
                report(stderr, &e);
                return Err(Failure::Data);
            }
        };
        let shard = dataset.locate(id).map_or(0, |(k, _)| k);
        let payload = dataset.shards()[shard].payload();
        if let Some(w) = wanted.as_deref_mut() {
            w.mark(payload, &record.as_record());
        }
        let json = JsonLine {
            payload,
            strict,
            filter: wanted.as_deref().map(Wanted::names),
            schema: schema.or(detected.get(shard).and_then(Option::as_ref)),
        };
        json.write(
            &record.as_record(),
            &mut line,
            out,
            &mut notes[shard],
            stderr,
        )?;
    }
    Ok(())
}

/// How `get` prints a record: one JSON line.
pub(super) struct JsonLine<'a> {
    pub(super) payload: crate::view::PayloadKind,
    pub(super) strict: bool,
    pub(super) filter: Option<&'a [Vec<u8>]>,
    /// Records of a message given at run time (`--message`), not of `payload`.
    pub(super) schema: Option<&'a (Schema, JsonOptions)>,
}

impl JsonLine<'_> {
    /// Prints `record` (through `line`, reused) to `out`; a record that does
    /// not decode is reported, after what was printed before it.
    pub(super) fn write(
        &self,
        record: &crate::frame::Record<'_>,
        line: &mut Vec<u8>,
        out: &mut dyn Write,
        notes: &mut super::payload::Notes,
        stderr: &mut dyn Write,
    ) -> CmdResult {
        line.clear();
        let written = super::schema_args::write_json(
            self.schema,
            line,
            self.payload,
            record,
            self.strict,
            self.filter,
        );
        if let Err(e) = written {
            if self.schema.is_none() {
                notes.bad(record.id, record.data);
            }
            out.flush()?;
            report(stderr, &record.context(e));
            return Err(Failure::Data);
        }
        if self.schema.is_none() {
            notes.record(record.id, record.data, record.data_offset);
        }
        line.push(b'\n');
        out.write_all(line)?;
        Ok(())
    }
}

pub(super) fn order(
    files: &[PathBuf],
    read: &ReadArgs,
    index: Option<&Path>,
    spec: crate::order::OrderSpec,
    epoch: u64,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    if index.is_some() && files.len() > 1 {
        return Err(Failure::Usage("--index goes with a single file".into()));
    }
    // Plain and compressed files alike: through their indexes (a compressed
    // file's checkpoint index), nothing decompressed.
    let shards = open_each(
        files,
        |path| open_shard(path, read, index),
        note_rejected_sidecar,
        stderr,
    )?;
    let order = Dataset::from_shards(shards)
        .order(spec)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let mut out = std::io::BufWriter::new(stdout);
    for id in order.epoch(epoch).iter() {
        writeln!(out, "{id}")?;
    }
    out.flush()?;
    Ok(())
}
