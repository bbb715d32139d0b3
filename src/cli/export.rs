//! `export`: every record of the inputs decoded with a spec
//! ([`crate::batch`]), batch by batch, and the columns written as one
//! Parquet file ([`parquet`], with the `export` feature) or a directory of
//! `.npy` files ([`npy`]).
//!
//! One row per record. Columns lose the batch's padding: a
//! `fixed_len_sequence` column holds each record's elements only (its
//! lengths say how many), so that batches can be concatenated.

#[cfg(feature = "export")]
mod message;
#[cfg(feature = "export")]
mod parquet;

mod npy;

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use super::payload::Chosen;
use super::progress::Progress;
use super::{
    next_or_fail, report, CmdResult, ExportCommand, ExportFormat, Failure, ReadArgs, EXIT_USAGE,
};
use crate::batch::{Batch, Column, DType, Decoder, FeatureSpec, Form, Spec};
use crate::error::Error;
use crate::frame::{ErrorPolicy, Record};
use crate::io::{RecordFile, Source};

/// What `export` was asked to do.
pub(super) struct ExportOptions<'a> {
    pub inputs: &'a [PathBuf],
    pub out: &'a Path,
    /// A spec JSON file, or `auto` (without `--message`).
    pub spec: Option<&'a Path>,
    /// `--message` and its schema.
    pub schema: &'a super::SchemaSource,
    /// `--columns`: field paths of the message.
    pub columns: Option<&'a [String]>,
    /// `--enum-names`.
    pub enum_names: bool,
    pub format: Option<ExportFormat>,
    pub batch_size: usize,
    pub threads: Option<usize>,
    pub force: bool,
    pub read: &'a ReadArgs,
}

/// How a column is laid out, whatever its dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// `prod(shape)` values per record (`fixed_len`, `ofrecord_raw`).
    Fixed,
    /// Whole elements (frames) of `shape` per record, padded in the batch
    /// (`fixed_len_sequence`).
    Padded,
    /// Any number of values per record (`var_len`).
    Ragged,
    /// Frames of any number of values per record (`var_len` among a
    /// SequenceExample's sequence features).
    RaggedFrames,
}

/// One column of the output, from its feature's spec.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    /// The feature's name.
    pub name: String,
    /// The column's name: the feature's, but `sequence.NAME` for a sequence
    /// feature whose name a context feature has too.
    pub column: String,
    /// A SequenceExample's sequence feature (else a feature, or context feature).
    pub sequence: bool,
    pub form: &'static str,
    pub shape: Shape,
    pub dtype: DType,
    /// The shape of one record's values (Fixed) or of one element (Padded);
    /// empty for the ragged forms.
    pub dims: Vec<usize>,
}

impl Plan {
    fn new(f: &FeatureSpec, sequence: bool) -> Plan {
        let shape = match (&f.form, sequence) {
            (Form::FixedLen { .. } | Form::OfRecordRaw { .. }, _) => Shape::Fixed,
            (Form::FixedLenSequence { .. }, _) => Shape::Padded,
            (Form::VarLen, false) => Shape::Ragged,
            (Form::VarLen, true) => Shape::RaggedFrames,
        };
        Plan {
            name: f.name.clone(),
            column: f.name.clone(),
            sequence,
            form: f.form.name(),
            shape,
            dtype: f.dtype,
            dims: f.form.shape().map(<[usize]>::to_vec).unwrap_or_default(),
        }
    }

    /// Values in one element (record of a Fixed column, element of a Padded one).
    pub fn elems(&self) -> usize {
        self.dims.iter().product()
    }

    /// The columns of `spec`, features then sequence features, named by
    /// [`Spec::column_names`] (an error when two would have the same name).
    pub fn all(spec: &Spec) -> Result<Vec<Plan>, String> {
        let names = spec.column_names().map_err(|e| e.to_string())?;
        let features = spec.features().iter().map(|f| Plan::new(f, false));
        let sequence = spec.sequence().iter().map(|f| Plan::new(f, true));
        Ok(features
            .chain(sequence)
            .zip(names)
            .map(|(p, column)| Plan { column, ..p })
            .collect())
    }
}

/// The value slots of one batch's column that hold data, in order: all of
/// them, or for a padded column the first `lengths[r] * elems` of each row.
pub(super) fn runs(plan: &Plan, col: &Column<'_>) -> Vec<Range<usize>> {
    if plan.shape != Shape::Padded {
        return std::iter::once(0..col.len()).collect();
    }
    let lengths = col.lengths().unwrap_or_default();
    let rows = lengths.len();
    let slots = col.len().checked_div(rows).unwrap_or(0);
    let elems = plan.elems();
    lengths
        .iter()
        .enumerate()
        .map(|(r, &n)| r * slots..r * slots + n as usize * elems)
        .filter(|r| !r.is_empty())
        .collect()
}

/// The numeric values of `runs` as little-endian bytes.
pub(super) fn raw_runs<'c>(
    col: &'c Column<'_>,
    runs: &'c [Range<usize>],
) -> impl Iterator<Item = &'c [u8]> + 'c {
    let w = col.dtype().width();
    let raw = col.raw_values();
    runs.iter().map(move |r| &raw[r.start * w..r.end * w])
}

/// The bytes values of `runs`.
pub(super) fn bytes_runs<'c>(
    col: &'c Column<'_>,
    runs: &'c [Range<usize>],
) -> impl Iterator<Item = &'c [u8]> + 'c {
    runs.iter()
        .flat_map(|r| r.clone())
        .map(|i| col.bytes_value(i).unwrap_or_default())
}

/// A writer of the columns, batch by batch.
trait Sink {
    /// Writes the rows of one batch (the Parquet sink takes its columns, so
    /// that their buffers become Arrow's without a copy).
    fn write_batch(&mut self, batch: &mut Batch<'_>) -> Result<(), Error>;
    /// Finishes the output under its temporary name; returns the bytes written.
    fn finish(self: Box<Self>, rows: u64) -> Result<u64, Error>;
}

/// A temporary output, removed unless it was renamed to its final name.
struct TempOut {
    path: PathBuf,
    dir: bool,
    kept: bool,
}

impl TempOut {
    /// Moves it to `out`, replacing what is there (checked before: nothing,
    /// an empty directory, or anything with `--force`).
    fn commit(mut self, out: &Path) -> Result<(), Error> {
        let io = |e: std::io::Error, p: &Path| Error::io(e).with_file(p.display().to_string());
        match std::fs::symlink_metadata(out) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(out).map_err(|e| io(e, out))?,
            Ok(_) => std::fs::remove_file(out).map_err(|e| io(e, out))?,
            Err(_) => {}
        }
        std::fs::rename(&self.path, out).map_err(|e| io(e, out))?;
        self.kept = true;
        Ok(())
    }
}

impl Drop for TempOut {
    fn drop(&mut self) {
        if !self.kept {
            let _ = if self.dir {
                std::fs::remove_dir_all(&self.path)
            } else {
                std::fs::remove_file(&self.path)
            };
        }
    }
}

fn usage(m: impl Into<String>) -> Failure {
    Failure::Usage(m.into())
}

/// An output that cannot be written: `io_error`, exit 2.
fn out_failure(e: Error) -> Failure {
    Failure::Fatal(e, EXIT_USAGE)
}

/// Reads the spec file, or infers the spec (`auto`).
fn load_spec(o: &ExportOptions<'_>, spec: &Path, stderr: &mut dyn Write) -> Result<Spec, Failure> {
    if spec == Path::new("auto") {
        let (spec, notes) = super::inspect::infer_spec(o.inputs, o.read, stderr)?;
        for note in &notes {
            let _ = writeln!(stderr, "note: {note}");
        }
        return Ok(spec);
    }
    let name = spec.display().to_string();
    let text = std::fs::read(spec)
        .map_err(|e| Failure::Fatal(Error::io(e).with_file(name.as_str()), EXIT_USAGE))?;
    let spec = Spec::from_json(&text).map_err(|e| usage(format!("{name}: {e}")))?;
    if let Some(kind) = o.read.payload.get() {
        if kind != spec.payload() {
            return Err(usage(format!(
                "--payload {kind} but the spec {name} reads {}",
                spec.payload()
            )));
        }
    }
    Ok(spec)
}

/// Refuses an output that would replace something without `--force`.
fn check_out(out: &Path, force: bool) -> Result<(), Failure> {
    let Ok(meta) = std::fs::symlink_metadata(out) else {
        return Ok(());
    };
    let empty_dir =
        meta.is_dir() && std::fs::read_dir(out).is_ok_and(|mut entries| entries.next().is_none());
    if force || empty_dir {
        return Ok(());
    }
    let what = if meta.is_dir() {
        "a directory that is not empty"
    } else {
        "a file"
    };
    Err(usage(format!(
        "{}: exists ({what}); --force to replace it",
        out.display()
    )))
}

/// Runs `export` as the command line gave it.
pub(super) fn run(c: &ExportCommand, stderr: &mut dyn Write) -> CmdResult {
    export(
        &ExportOptions {
            inputs: &c.inputs,
            out: &c.out,
            spec: c.spec.as_deref(),
            schema: &c.schema,
            columns: c.columns.as_deref(),
            enum_names: c.enum_names,
            format: c.format,
            batch_size: usize::try_from(c.batch_size).unwrap_or(usize::MAX),
            threads: c.threads.map(|t| usize::try_from(t).unwrap_or(1)),
            force: c.force,
            read: &c.read,
        },
        stderr,
    )
}

/// Runs `export`.
fn export(o: &ExportOptions<'_>, stderr: &mut dyn Write) -> CmdResult {
    let start = Instant::now();
    let format = o.format.unwrap_or_else(|| {
        let parquet = o
            .out
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
        if parquet {
            ExportFormat::Parquet
        } else {
            ExportFormat::Npy
        }
    });
    if o.out == Path::new("-") {
        return Err(usage("export writes files: OUT cannot be stdout (-)"));
    }
    if cfg!(not(feature = "export")) && format == ExportFormat::Parquet {
        return Err(usage(
            "this recordwire was built without the `export` feature (Parquet output); --format npy writes .npy files",
        ));
    }
    // A URL is written locally first, then uploaded whole (one object:
    // Parquet only); a `file://` URL is its local path.
    let destination = super::output::Destination::new(o.out, o.read.storage_pairs())?;
    if destination.is_remote() && format == ExportFormat::Npy {
        return Err(usage(format!(
            "{}: --format npy writes a directory of files, and a URL names one object: \
             export npy to a local directory, or write one .parquet object",
            o.out.display()
        )));
    }
    #[cfg(feature = "remote")]
    if destination.is_remote() && !o.force {
        let options = crate::io::remote::StorageOptions::new(o.read.storage_option.iter().cloned());
        let url = o.out.display().to_string();
        if crate::io::remote::exists(&url, &options).map_err(out_failure)? {
            return Err(usage(format!(
                "{url}: exists (an object); --force to replace it"
            )));
        }
    }
    // `out/` and `out` are one path (the temporary goes beside it, not in it).
    let out: PathBuf = destination.local().components().collect();
    let Some(out_name) = out.file_name() else {
        return Err(usage(format!(
            "{}: not a path to write to (give a file or directory name)",
            o.out.display()
        )));
    };
    let mut temp_name = out_name.to_os_string();
    temp_name.push(format!(".tmp-{}", std::process::id()));
    let temp = out.with_file_name(temp_name);
    check_out(&out, o.force)?;
    let auto = o.spec == Some(Path::new("auto"));
    if auto {
        // The inference reads the inputs once, the export a second time.
        if let Some(p) = o.inputs.iter().find(|p| {
            *p == Path::new("-") || std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir())
        }) {
            return Err(usage(format!(
                "{}: --spec auto reads the inputs twice, a pipe or stdin only once; write the spec first with inspect --spec",
                p.display()
            )));
        }
    }
    #[cfg(feature = "export")]
    if let Some(schema) = o.schema.load()? {
        return message::export(
            o,
            &schema,
            (&out, &temp),
            destination,
            format,
            start,
            stderr,
        );
    }
    let Some(spec) = o.spec else {
        return Err(usage(
            "export needs --spec FILE|auto, or --message with its schema",
        ));
    };
    let spec = load_spec(o, spec, stderr)?;
    let plans = Plan::all(&spec).map_err(usage)?;
    if plans.is_empty() {
        return Err(usage(
            "the spec has no features: there is nothing to export",
        ));
    }

    let mut guard = TempOut {
        path: temp.clone(),
        dir: format == ExportFormat::Npy,
        kept: true,
    };
    let mut sink: Box<dyn Sink> = match format {
        ExportFormat::Npy => {
            if let Err(e) = std::fs::create_dir(&temp) {
                return Err(out_failure(
                    Error::io(e).with_file(temp.display().to_string()),
                ));
            }
            guard.kept = false;
            Box::new(npy::NpyOut::create(&temp, &spec, &plans).map_err(out_failure)?)
        }
        ExportFormat::Parquet => {
            #[cfg(feature = "export")]
            {
                let file = std::fs::File::create_new(&temp)
                    .map_err(|e| out_failure(Error::io(e).with_file(temp.display().to_string())))?;
                guard.kept = false;
                Box::new(
                    parquet::ParquetOut::create(file, &temp, &spec, o.batch_size)
                        .map_err(out_failure)?,
                )
            }
            #[cfg(not(feature = "export"))]
            return Err(usage("built without Parquet output"));
        }
    };

    let threads = o.threads.unwrap_or_else(|| super::threads(None));
    let decoder = Decoder::new(threads);
    let mut feed = Feed::new(o.inputs, o.read, Some(spec.payload()), auto);
    let mut rows = 0u64;
    // The batch's memory, kept from one batch to the next (each batch's
    // records borrow from the feed anew).
    let mut spare: Batch<'static> = Batch::new();
    loop {
        feed.fill(o.batch_size, stderr)?;
        if feed.pending.is_empty() {
            break;
        }
        let records = feed.records();
        let mut batch = spare.recycle();
        if let Err(e) = decoder.decode(&records, &spec, &mut batch) {
            report(stderr, &e);
            return Err(Failure::Data);
        }
        rows += batch.rows() as u64;
        sink.write_batch(&mut batch).map_err(out_failure)?;
        spare = batch.recycle();
    }
    let bytes = sink.finish(rows).map_err(out_failure)?;
    guard.commit(&out).map_err(out_failure)?;
    destination.finish()?;
    let _ = writeln!(
        stderr,
        "exported {rows} record{} ({} file{}), {} column{}, {bytes} bytes written to {} ({}) in {:.2}s",
        if rows == 1 { "" } else { "s" },
        o.inputs.len(),
        if o.inputs.len() == 1 { "" } else { "s" },
        plans.len(),
        if plans.len() == 1 { "" } else { "s" },
        o.out.display(),
        format,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Where one held record's payload is.
enum Held {
    /// A slice of a mapped (or read) file: shared, not copied.
    Shared(Bytes),
    /// Copied out of a stream into the batch's buffer.
    Copied(Range<usize>),
}

/// A record read for the next batch.
struct Pending {
    held: Held,
    id: u64,
    offset: u64,
    data_offset: u64,
    end: u64,
    /// The file's name, in [`Feed::names`].
    name: usize,
}

/// The input file being read.
struct Open {
    source: Source,
    /// The file in memory, when it is one (its records are shared, not copied).
    file: Option<RecordFile>,
    progress: Progress,
}

/// The records of all the inputs, in order, gathered batch by batch: a
/// batch may span files. Records of a file in memory are held as shared
/// slices of it; those of a stream (a compressed file, a pipe) are copied
/// into one buffer per batch.
struct Feed<'o> {
    inputs: &'o [PathBuf],
    read: &'o ReadArgs,
    /// The payload the spec reads (`None`: records read by a schema,
    /// whatever they look like).
    payload: Option<crate::view::PayloadKind>,
    /// The spec was inferred from the inputs (`--spec auto`).
    inferred: bool,
    next: usize,
    open: Option<Open>,
    names: Vec<Arc<str>>,
    pending: Vec<Pending>,
    arena: Vec<u8>,
}

impl<'o> Feed<'o> {
    fn new(
        inputs: &'o [PathBuf],
        read: &'o ReadArgs,
        payload: Option<crate::view::PayloadKind>,
        inferred: bool,
    ) -> Self {
        Feed {
            inputs,
            read,
            payload,
            inferred,
            next: 0,
            open: None,
            names: Vec::new(),
            pending: Vec::new(),
            arena: Vec::new(),
        }
    }

    /// Replaces the held records with the next `want` (fewer at the end).
    fn fill(&mut self, want: usize, stderr: &mut dyn Write) -> Result<(), Failure> {
        self.pending.clear();
        self.arena.clear();
        while self.pending.len() < want {
            if self.open.is_none() {
                let Some(path) = self.inputs.get(self.next) else {
                    return Ok(());
                };
                self.next += 1;
                // With `--spec auto`, the inference's pass said already
                // what the payload detection found.
                let mut quiet = std::io::sink();
                let said: &mut dyn Write = if self.inferred { &mut quiet } else { stderr };
                let (source, chosen) =
                    self.read.open_with_payload(path, ErrorPolicy::Fail, said)?;
                self.note_payload(&source, chosen, stderr);
                self.names.push(Arc::from(source.name()));
                self.open = Some(Open {
                    file: source.as_file().cloned(),
                    progress: Progress::over("exporting", &source),
                    source,
                });
            }
            let Some(open) = self.open.as_mut() else {
                continue;
            };
            let name = self.names.len() - 1;
            match next_or_fail(&mut open.source, stderr)? {
                None => {
                    open.progress.finish();
                    self.open = None;
                }
                Some(record) => {
                    open.progress.update(record.end);
                    let held = match &open.file {
                        Some(file) => Held::Shared(file.record_bytes(&record)),
                        None => {
                            let at = self.arena.len();
                            self.arena.extend_from_slice(record.data);
                            Held::Copied(at..self.arena.len())
                        }
                    };
                    self.pending.push(Pending {
                        held,
                        id: record.id,
                        offset: record.offset,
                        data_offset: record.data_offset,
                        end: record.end,
                        name,
                    });
                }
            }
        }
        Ok(())
    }

    /// The held records, to decode.
    fn records(&self) -> Vec<Record<'_>> {
        self.pending
            .iter()
            .map(|p| Record {
                id: p.id,
                offset: p.offset,
                data_offset: p.data_offset,
                end: p.end,
                data: match &p.held {
                    Held::Shared(b) => &b[..],
                    Held::Copied(r) => &self.arena[r.clone()],
                },
                file: self.names.get(p.name),
            })
            .collect()
    }

    /// Says on stderr when an input looks like another payload than the
    /// spec reads (its records are read as the spec says).
    fn note_payload(&self, source: &Source, chosen: Chosen, stderr: &mut dyn Write) {
        let Some(payload) = self.payload else {
            return;
        };
        if !chosen.forced && chosen.kind != payload {
            let _ = writeln!(
                stderr,
                "note: {}: records look like {}, read as {} as the spec says",
                source.name(),
                chosen.kind,
                payload
            );
        }
    }
}
