//! `inspect`: record count, size statistics and the schema, of one file or
//! summed over several (`--per-file`: a report for each); with `--spec`, the
//! spec of a batch decode inferred from the records.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::payload::Notes;
use super::stat::Stat;
use super::{next_or_fail, report, CmdResult, Failure, InspectCommand, ReadArgs, SpecFormat};
use crate::batch::{Spec, SpecInference};
use crate::frame::{ErrorPolicy, Framing, Record};
use crate::io::{Compression, Source};
use crate::names::quoted;
use crate::view::PayloadRef;
use crate::view::{DecodeOptions, FeatureRef, FeaturesRef, Kind, PayloadKind, UnknownField};
use crate::DecodeError;

/// What is known of one feature name across the records.
#[derive(Debug, Default)]
struct FeatureStats {
    /// Records holding the feature, per kind (`None` = a feature with no kind).
    kinds: BTreeMap<Option<Kind>, u64>,
    /// Values per record where present.
    values: Stat,
}

#[derive(Debug, Default)]
struct Schema {
    context: BTreeMap<Vec<u8>, FeatureStats>,
    /// SequenceExample feature lists: per name, the number of steps and the
    /// stats of the features inside.
    lists: BTreeMap<Vec<u8>, (Stat, FeatureStats)>,
}

impl FeatureStats {
    /// Adds what `other` saw.
    fn merge(&mut self, other: &FeatureStats) {
        for (kind, n) in &other.kinds {
            *self.kinds.entry(*kind).or_default() += n;
        }
        self.values.merge(&other.values);
    }
}

fn kind_name(k: Option<Kind>) -> &'static str {
    k.map_or("(no kind)", Kind::name)
}

fn add_feature(stats: &mut FeatureStats, f: FeatureRef<'_>) -> Result<(), DecodeError> {
    let list = f.list()?;
    *stats.kinds.entry(list.map(|l| l.kind())).or_default() += 1;
    stats.values.add(match list {
        Some(l) => l.len()? as u64,
        None => 0,
    });
    Ok(())
}

fn add_features(
    map: &mut BTreeMap<Vec<u8>, FeatureStats>,
    features: FeaturesRef<'_>,
) -> Result<(), DecodeError> {
    for f in features.iter() {
        let f = f?;
        let stats = match map.get_mut(f.name()) {
            Some(s) => s,
            None => map.entry(f.name().to_vec()).or_default(),
        };
        add_feature(stats, f.feature)?;
    }
    Ok(())
}

impl Schema {
    fn add(&mut self, payload: PayloadKind, data: &[u8], base: u64) -> Result<(), DecodeError> {
        let payload = PayloadRef::new(payload, data, base);
        if let Some(features) = payload.features() {
            add_features(&mut self.context, features)?;
        }
        for l in payload
            .feature_lists()
            .iter()
            .flat_map(|lists| lists.iter())
        {
            let l = l?;
            let (steps, stats) = self.lists.entry(l.name().to_vec()).or_default();
            steps.add(l.list.len()? as u64);
            for f in l.list.iter() {
                add_feature(stats, f?)?;
            }
        }
        Ok(())
    }

    /// Adds what `other` saw (the records of another file).
    fn merge(&mut self, other: &Schema) {
        for (name, stats) in &other.context {
            self.context.entry(name.clone()).or_default().merge(stats);
        }
        for (name, (steps, stats)) in &other.lists {
            let (all_steps, all_stats) = self.lists.entry(name.clone()).or_default();
            all_steps.merge(steps);
            all_stats.merge(stats);
        }
    }
}

fn kinds_text(s: &FeatureStats) -> String {
    s.kinds
        .iter()
        .map(|(k, n)| format!("{}×{n}", kind_name(*k)))
        .collect::<Vec<_>>()
        .join(",")
}

fn kinds_json(s: &FeatureStats) -> String {
    let parts: Vec<String> = s
        .kinds
        .iter()
        .map(|(k, n)| format!("\"{}\":{n}", k.map_or("none", Kind::name)))
        .collect();
    format!("{{{}}}", parts.join(","))
}

pub(super) fn stat_json(s: &Stat) -> String {
    format!(
        "{{\"min\":{},\"max\":{},\"mean\":{:.3},\"total\":{}}}",
        s.min(),
        s.max,
        s.mean(),
        s.sum
    )
}

/// Reads every record of `source` to the end or the first error: `seen`
/// sees each (pad frames included) and says whether it is a payload; each
/// payload is validated, handed to `each`, and noted (`notes`, finished
/// here). An error is reported on `stderr`.
#[allow(clippy::too_many_arguments)]
fn walk_payloads(
    source: &mut Source,
    notes: &mut Notes,
    name: &str,
    (payload, options): (PayloadKind, DecodeOptions),
    label: &str,
    stderr: &mut dyn Write,
    mut seen: impl FnMut(&Record<'_>) -> bool,
    mut each: impl FnMut(&[u8], u64) -> Result<(), DecodeError>,
) -> Result<(), Failure> {
    let progress = super::progress::Progress::over(label, source);
    loop {
        let record = match next_or_fail(source, stderr) {
            Ok(Some(record)) => record,
            Ok(None) => break,
            Err(e) => {
                notes.finish(name, stderr);
                return Err(e);
            }
        };
        progress.update(record.end);
        if !seen(&record) {
            continue;
        }
        let r = payload
            .validate(record.data, record.data_offset, options)
            .and_then(|()| each(record.data, record.data_offset));
        if let Err(e) = r {
            notes.bad(record.id, record.data);
            report(stderr, &record.context(e));
            notes.finish(name, stderr);
            return Err(Failure::Data);
        }
        notes.record(record.id, record.data, record.data_offset);
    }
    notes.finish(name, stderr);
    Ok(())
}

/// Runs `inspect` over `files`: with `--spec` one spec over all of them;
/// else a report of the one file, a summary of several, or with
/// `--per-file` a report for each.
pub(super) fn run(c: &InspectCommand, stdout: &mut dyn Write, stderr: &mut dyn Write) -> CmdResult {
    if let Some(schema) = c.schema.load()? {
        if c.spec {
            return Err(Failure::Usage(
                "--spec infers a tf.Example spec; with --message the report is per field path"
                    .to_owned(),
            ));
        }
        return super::inspect_schema::run(c, &schema, stdout, stderr);
    }
    if c.spec {
        return inspect_spec(&c.files, &c.read, c.spec_format, stdout, stderr);
    }
    if c.per_file || c.files.len() == 1 {
        return super::each_file(&c.files, |file| {
            let report = gather(file, &c.read, stderr)?;
            if c.json {
                report.write_json(stdout)
            } else {
                report.write_text(file, &c.read, stdout)
            }
        });
    }
    let mut summary = Summary::default();
    for file in &c.files {
        summary.add(file, gather(file, &c.read, stderr)?);
    }
    if c.json {
        summary.write_json(stdout)
    } else {
        summary.write_text(stdout)
    }
}

/// What `inspect` found in one file.
struct FileReport {
    name: String,
    framing: Framing,
    compression: Compression,
    payload: PayloadKind,
    /// The message detected (a TensorBoard event, an ELWC), read raw.
    message: Option<&'static str>,
    /// The sizes of the records' data (pad frames apart).
    sizes: Stat,
    /// The sizes of the pad frames.
    pads: Stat,
    /// Bytes of frames, pads included, in the (decompressed) stream.
    frame_bytes: u64,
    schema: Schema,
    /// Records holding top-level fields their message does not have.
    unknown: u64,
    /// The first of them: (record id, field).
    first_unknown: Option<(u64, UnknownField)>,
}

/// Reads every record of `path` for `inspect`.
fn gather(path: &Path, read: &ReadArgs, stderr: &mut dyn Write) -> Result<FileReport, Failure> {
    // Pad frames are seen here (not skipped) so that their cost is reported.
    let mut options = read.open_options(ErrorPolicy::Fail);
    options.read.skip_pads = false;
    let (mut source, chosen) = read.open_payload(path, &options, stderr)?;
    let name = source.name().to_string();
    let framing = source.framing();
    let compression = source.compression();
    let (payload, message) = (chosen.kind, chosen.message);
    let mut notes = Notes::new(chosen);
    let mut sizes = Stat::default();
    let mut pads = Stat::default();
    let mut frame_bytes = 0u64;
    let mut schema = Schema::default();
    let options = DecodeOptions {
        strict: read.strict,
    };
    walk_payloads(
        &mut source,
        &mut notes,
        &name,
        (payload, options),
        "inspecting",
        stderr,
        |record| {
            frame_bytes += record.end - record.offset;
            if crate::frame::is_pad(record.data) {
                pads.add(record.end - record.offset);
                return false;
            }
            sizes.add(record.data.len() as u64);
            true
        },
        |data, base| schema.add(payload, data, base),
    )?;
    let (unknown, first_unknown) = notes.unknown();
    Ok(FileReport {
        name,
        framing,
        compression,
        payload,
        message,
        sizes,
        pads,
        frame_bytes,
        schema,
        unknown,
        first_unknown,
    })
}

/// The `"features"` and `"feature_lists"` members of the JSON report.
fn schema_json(schema: &Schema) -> String {
    let feats: Vec<String> = schema
        .context
        .iter()
        .map(|(n, s)| {
            format!(
                "{}:{{\"records\":{},\"kinds\":{},\"values\":{}}}",
                quoted(n),
                s.values.n,
                kinds_json(s),
                stat_json(&s.values)
            )
        })
        .collect();
    let lists: Vec<String> = schema
        .lists
        .iter()
        .map(|(n, (steps, s))| {
            format!(
                "{}:{{\"records\":{},\"steps\":{},\"kinds\":{},\"values\":{}}}",
                quoted(n),
                steps.n,
                stat_json(steps),
                kinds_json(s),
                stat_json(&s.values)
            )
        })
        .collect();
    format!(
        "\"features\":{{{}}},\"feature_lists\":{{{}}}",
        feats.join(","),
        lists.join(",")
    )
}

/// The size lines of the text report: padding (when there is any) and
/// record sizes.
pub(super) fn write_sizes(
    stdout: &mut dyn Write,
    sizes: &Stat,
    pads: &Stat,
    frame_bytes: u64,
    of_what: &str,
) -> CmdResult {
    if pads.n > 0 {
        writeln!(
            stdout,
            "padding:     {} pad frames, {} bytes ({:.2}% of {of_what})",
            pads.n,
            pads.sum,
            100.0 * pads.sum as f64 / frame_bytes.max(1) as f64
        )?;
    }
    writeln!(
        stdout,
        "record size: min {} / mean {:.1} / max {} bytes, {} bytes of data in all",
        sizes.min(),
        sizes.mean(),
        sizes.max,
        sizes.sum
    )?;
    Ok(())
}

/// The schema table of the text report: the (context) features, and with
/// `lists` the feature lists of SequenceExamples.
fn write_schema(stdout: &mut dyn Write, schema: &Schema, lists: bool) -> CmdResult {
    // Column widths from the rows themselves (a long kind list, a wide
    // name), in terminal columns: the table stays aligned.
    let names: Vec<&[u8]> = schema
        .context
        .keys()
        .chain(schema.lists.keys())
        .map(|n| &n[..])
        .collect();
    let width = names
        .iter()
        .map(|n| display_width(&quoted(n)))
        .max()
        .unwrap_or(4)
        .max(7);
    let kinds = schema
        .context
        .values()
        .chain(schema.lists.values().map(|(_, s)| s))
        .map(|s| kinds_text(s).chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    let cell = |text: &str, to: usize| {
        format!(
            "{text}{}",
            " ".repeat(to.saturating_sub(display_width(text)))
        )
    };
    let label = if lists {
        "context features"
    } else {
        "features"
    };
    writeln!(stdout, "{label}:    {}", schema.context.len())?;
    if !schema.context.is_empty() {
        writeln!(
            stdout,
            "  {}  {}  {:>8}  values per record (min / mean / max)",
            cell("name", width),
            cell("kind", kinds),
            "records"
        )?;
    }
    for (n, s) in &schema.context {
        writeln!(
            stdout,
            "  {}  {}  {:>8}  {} / {:.1} / {}",
            cell(&quoted(n), width),
            cell(&kinds_text(s), kinds),
            s.values.n,
            s.values.min(),
            s.values.mean(),
            s.values.max
        )?;
    }
    if lists {
        writeln!(stdout, "feature lists:    {}", schema.lists.len())?;
        if !schema.lists.is_empty() {
            writeln!(
                stdout,
                "  {}  {}  {:>8}  steps (min / mean / max)  values per step (min / mean / max)",
                cell("name", width),
                cell("kind", kinds),
                "records"
            )?;
        }
        for (n, (steps, s)) in &schema.lists {
            writeln!(
                stdout,
                "  {}  {}  {:>8}  {} / {:.1} / {}  {} / {:.1} / {}",
                cell(&quoted(n), width),
                cell(&kinds_text(s), kinds),
                steps.n,
                steps.min(),
                steps.mean(),
                steps.max,
                s.values.min(),
                s.values.mean(),
                s.values.max
            )?;
        }
    }
    Ok(())
}

/// The columns `text` takes in a terminal.
fn display_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

impl FileReport {
    /// The report as one JSON object on one line.
    fn write_json(&self, stdout: &mut dyn Write) -> CmdResult {
        writeln!(
            stdout,
            "{{\"file\":{},\"framing\":\"{}\",\"compression\":\"{}\",\"payload\":\"{}\",{}\"records\":{},\"data_bytes\":{},\"pad_frames\":{},\"pad_bytes\":{},\"unknown_fields\":{},{}}}",
            quoted(self.name.as_bytes()),
            self.framing.name(),
            self.compression.name(),
            self.payload.name(),
            self.message
                .map(|m| format!("\"message\":\"{m}\","))
                .unwrap_or_default(),
            self.sizes.n,
            stat_json(&self.sizes),
            self.pads.n,
            self.pads.sum,
            match self.first_unknown {
                Some((id, f)) => format!(
                    "{{\"records\":{},\"first\":{{\"record\":{id},\"field\":{},\"wire_type\":{}}}}}",
                    self.unknown, f.number, f.wire_type as u8
                ),
                None => "{\"records\":0,\"first\":null}".to_string(),
            },
            schema_json(&self.schema)
        )?;
        Ok(())
    }

    /// The report as text; `path` and `read` find a GZIP file's members.
    fn write_text(&self, path: &Path, read: &ReadArgs, stdout: &mut dyn Write) -> CmdResult {
        writeln!(stdout, "file:        {}", self.name)?;
        let container = match self.compression {
            Compression::Gzip => match super::gz::block_compression(path, read) {
                Some((true, members)) => {
                    format!("GZIP stream, block-compressed ({members} members of whole records)")
                }
                Some((false, 1)) => "GZIP stream (one member)".to_string(),
                Some((false, members)) => {
                    format!("GZIP stream ({members} members, not at record boundaries)")
                }
                None => "GZIP stream".to_string(),
            },
            other => container_name(other).to_string(),
        };
        writeln!(
            stdout,
            "format:      {} frames, {container}, {} payloads",
            self.framing.name(),
            self.message.unwrap_or(self.payload.name())
        )?;
        writeln!(stdout, "records:     {}", self.sizes.n)?;
        write_sizes(
            stdout,
            &self.sizes,
            &self.pads,
            self.frame_bytes,
            "the file",
        )?;
        if let Some((id, f)) = self.first_unknown {
            writeln!(
                stdout,
                "unknown:     {} {} fields {} does not have (first: field {}, wire type {}, in record {id})",
                self.unknown,
                if self.unknown == 1 { "record holds" } else { "records hold" },
                self.payload.message(),
                f.number,
                f.wire_type as u8
            )?;
        }
        if self.payload == PayloadKind::Raw {
            return Ok(());
        }
        write_schema(
            stdout,
            &self.schema,
            self.payload == PayloadKind::SequenceExample,
        )
    }
}

/// How the text report names a stream's compression (a GZIP file's members
/// aside).
fn container_name(compression: Compression) -> &'static str {
    match compression {
        Compression::Gzip => "GZIP stream",
        Compression::Zlib => "ZLIB stream",
        _ => "uncompressed",
    }
}

/// `inspect` over several files: what their reports add up to, with one
/// schema over all their records.
#[derive(Debug, Default)]
struct Summary {
    /// Files read.
    files: u64,
    /// Their sizes as stored (compressed, for a compressed file; the bytes
    /// of frames read, for a pipe).
    stored_bytes: u64,
    /// Files per (framing, compression, its name in the text, payload).
    formats: BTreeMap<(&'static str, &'static str, &'static str, &'static str), u64>,
    /// Records per file.
    records: Stat,
    sizes: Stat,
    pads: Stat,
    frame_bytes: u64,
    schema: Schema,
    /// Any file read as SequenceExamples (whose feature lists are shown).
    lists: bool,
    /// Any file read as a message (not raw bytes), whose features are shown.
    features: bool,
    unknown: u64,
    /// The first record with unknown fields: (file, record id, field).
    first_unknown: Option<(String, u64, UnknownField)>,
}

impl Summary {
    /// Adds the report of the file at `path`.
    fn add(&mut self, path: &Path, r: FileReport) {
        self.files += 1;
        let stored = std::fs::metadata(path)
            .ok()
            .filter(|m| m.is_file() && path != Path::new("-"))
            .map_or(r.frame_bytes, |m| m.len());
        self.stored_bytes += stored;
        *self
            .formats
            .entry((
                r.framing.name(),
                r.compression.name(),
                container_name(r.compression),
                r.payload.name(),
            ))
            .or_default() += 1;
        self.records.add(r.sizes.n);
        self.sizes.merge(&r.sizes);
        self.pads.merge(&r.pads);
        self.frame_bytes += r.frame_bytes;
        self.schema.merge(&r.schema);
        self.lists |= r.payload == PayloadKind::SequenceExample;
        self.features |= r.payload != PayloadKind::Raw;
        self.unknown += r.unknown;
        if self.first_unknown.is_none() {
            self.first_unknown = r.first_unknown.map(|(id, f)| (r.name, id, f));
        }
    }

    /// The summary as one JSON object on one line.
    fn write_json(&self, stdout: &mut dyn Write) -> CmdResult {
        let formats: Vec<String> = self
            .formats
            .iter()
            .map(|((framing, compression, _, payload), n)| {
                format!(
                    "{{\"framing\":\"{framing}\",\"compression\":\"{compression}\",\"payload\":\"{payload}\",\"files\":{n}}}"
                )
            })
            .collect();
        writeln!(
            stdout,
            "{{\"files\":{},\"stored_bytes\":{},\"frame_bytes\":{},\"formats\":[{}],\"records\":{},\"records_per_file\":{},\"data_bytes\":{},\"pad_frames\":{},\"pad_bytes\":{},\"unknown_fields\":{},{}}}",
            self.files,
            self.stored_bytes,
            self.frame_bytes,
            formats.join(","),
            self.records.sum,
            stat_json(&self.records),
            stat_json(&self.sizes),
            self.pads.n,
            self.pads.sum,
            match &self.first_unknown {
                Some((file, id, f)) => format!(
                    "{{\"records\":{},\"first\":{{\"file\":{},\"record\":{id},\"field\":{},\"wire_type\":{}}}}}",
                    self.unknown,
                    quoted(file.as_bytes()),
                    f.number,
                    f.wire_type as u8
                ),
                None => "{\"records\":0,\"first\":null}".to_string(),
            },
            schema_json(&self.schema)
        )?;
        Ok(())
    }

    /// The summary as text, laid out as the report of one file.
    fn write_text(&self, stdout: &mut dyn Write) -> CmdResult {
        writeln!(
            stdout,
            "files:       {}, {} bytes stored, {} bytes of frames",
            self.files, self.stored_bytes, self.frame_bytes
        )?;
        let one = self.formats.len() == 1;
        for (i, ((framing, _, container, payload), n)) in self.formats.iter().enumerate() {
            let label = if i == 0 { "format:" } else { "" };
            let count = if one {
                String::new()
            } else {
                format!("{n} {}: ", if *n == 1 { "file" } else { "files" })
            };
            writeln!(
                stdout,
                "{label:<13}{count}{framing} frames, {container}, {payload} payloads"
            )?;
        }
        writeln!(
            stdout,
            "records:     {} (per file: min {} / mean {:.1} / max {})",
            self.records.sum,
            self.records.min(),
            self.records.mean(),
            self.records.max
        )?;
        write_sizes(
            stdout,
            &self.sizes,
            &self.pads,
            self.frame_bytes,
            "the frames",
        )?;
        if let Some((file, id, f)) = &self.first_unknown {
            writeln!(
                stdout,
                "unknown:     {} {} fields their message does not have (first: field {}, wire type {}, in {file} record {id})",
                self.unknown,
                if self.unknown == 1 { "record holds" } else { "records hold" },
                f.number,
                f.wire_type as u8
            )?;
        }
        if !self.features {
            return Ok(());
        }
        write_schema(stdout, &self.schema, self.lists)
    }
}

/// Runs `inspect --spec`: one spec inferred from every record of all the
/// files, printed as `format` says; the inference's notes on stderr.
fn inspect_spec(
    files: &[PathBuf],
    read: &ReadArgs,
    format: SpecFormat,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    let (spec, notes) = infer_spec(files, read, stderr)?;
    for note in &notes {
        let _ = writeln!(stderr, "note: {note}");
    }
    let text = match format {
        SpecFormat::Json => spec.to_json(),
        SpecFormat::Tf => spec.to_tensorflow(),
    };
    stdout.write_all(text.as_bytes())?;
    Ok(())
}

/// Infers one spec from every record of `files`, in order (what `inspect
/// --spec` prints and `export --spec auto` uses), with the inference's notes.
///
/// Records are read as the payload the first file is read as (`--payload`,
/// or detected); a later file detected as another payload is a usage error,
/// since one spec reads one payload. A damaged record, or one that does not
/// decode as its payload (with `--strict`, one that strict mode refuses),
/// stops the walk as in `inspect`.
pub(super) fn infer_spec(
    files: &[PathBuf],
    read: &ReadArgs,
    stderr: &mut dyn Write,
) -> Result<(Spec, Vec<String>), Failure> {
    let options = DecodeOptions {
        strict: read.strict,
    };
    let mut inference: Option<(SpecInference, PayloadKind, String)> = None;
    for path in files {
        let (mut source, chosen) = read.open_with_payload(path, ErrorPolicy::Fail, stderr)?;
        // A spec reads tf.Example features: a detected Event or ELWC file is
        // read as tf.Examples (as the Python package infers it), with the
        // notes on the fields a tf.Example does not have.
        let chosen = chosen.without_message();
        let name = source.name().to_string();
        let payload = chosen.kind;
        if payload == PayloadKind::Raw {
            return Err(Failure::Usage(format!(
                "{name}: a spec reads example, sequence_example or ofrecord payloads, not raw bytes; name one with --payload"
            )));
        }
        let (inference, first_kind, first_name) =
            inference.get_or_insert_with(|| (SpecInference::new(payload), payload, name.clone()));
        if payload != *first_kind {
            let mixed = crate::dataset::MixedPayloads {
                first: (first_name.clone(), *first_kind),
                other: (name, payload),
            };
            return Err(Failure::Usage(mixed.to_string()));
        }
        let mut notes = Notes::new(chosen);
        walk_payloads(
            &mut source,
            &mut notes,
            &name,
            (payload, options),
            "inferring",
            stderr,
            |_| true,
            |data, base| inference.add(data, base),
        )?;
    }
    let (inference, _, _) = inference.ok_or_else(|| Failure::Usage("no input files".into()))?;
    Ok(inference.finish())
}
