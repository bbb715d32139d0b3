//! `inspect`: record count, size statistics and the schema; with `--spec`,
//! the spec of a batch decode inferred from the records.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::payload::Notes;
use super::{next_or_fail, report, CmdResult, Failure, InspectCommand, ReadArgs, SpecFormat};
use crate::batch::{Spec, SpecInference};
use crate::frame::{ErrorPolicy, Record};
use crate::io::Source;
use crate::names::quoted;
use crate::view::PayloadRef;
use crate::view::{DecodeOptions, FeatureRef, FeaturesRef, Kind, PayloadKind};
use crate::DecodeError;

/// Running min / max / sum.
#[derive(Debug, Clone, Copy)]
struct Stat {
    min: u64,
    max: u64,
    sum: u64,
    n: u64,
}

impl Default for Stat {
    fn default() -> Self {
        Stat {
            min: u64::MAX,
            max: 0,
            sum: 0,
            n: 0,
        }
    }
}

impl Stat {
    fn add(&mut self, v: u64) {
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v;
        self.n += 1;
    }

    fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    fn min(&self) -> u64 {
        if self.n == 0 {
            0
        } else {
            self.min
        }
    }
}

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

fn stat_json(s: &Stat) -> String {
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
            notes.bad(record.id);
            report(stderr, &record.context(e));
            notes.finish(name, stderr);
            return Err(Failure::Data);
        }
        notes.record(record.id, record.data, record.data_offset);
    }
    notes.finish(name, stderr);
    Ok(())
}

/// Runs `inspect` over `files`: a report for each, or with `--spec` one
/// spec over all of them.
pub(super) fn run(c: &InspectCommand, stdout: &mut dyn Write, stderr: &mut dyn Write) -> CmdResult {
    if c.spec {
        return inspect_spec(&c.files, &c.read, c.spec_format, stdout, stderr);
    }
    super::each_file(&c.files, |file| {
        inspect(file, &c.read, c.json, stdout, stderr)
    })
}

/// Runs `inspect` on one file.
fn inspect(
    path: &Path,
    read: &ReadArgs,
    json: bool,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    // Pad frames are seen here (not skipped) so that their cost is reported.
    let mut options = read.open_options(ErrorPolicy::Fail);
    options.read.skip_pads = false;
    let (mut source, chosen) = read.open_payload(path, &options, stderr)?;
    let name = source.name().to_string();
    let framing = source.framing();
    let compression = source.compression();
    let payload = chosen.kind;
    let mut notes = Notes::new(chosen);
    let mut sizes = Stat::default();
    let mut pads = Stat::default();
    let mut file_bytes = 0u64;
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
            file_bytes += record.end - record.offset;
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
    if json {
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
        writeln!(
            stdout,
            "{{\"file\":{},\"framing\":\"{}\",\"compression\":\"{}\",\"payload\":\"{}\",\"records\":{},\"data_bytes\":{},\"pad_frames\":{},\"pad_bytes\":{},\"unknown_fields\":{},\"features\":{{{}}},\"feature_lists\":{{{}}}}}",
            quoted(name.as_bytes()),
            framing.name(),
            compression.name(),
            payload.name(),
            sizes.n,
            stat_json(&sizes),
            pads.n,
            pads.sum,
            match first_unknown {
                Some((id, f)) => format!(
                    "{{\"records\":{unknown},\"first\":{{\"record\":{id},\"field\":{},\"wire_type\":{}}}}}",
                    f.number, f.wire_type as u8
                ),
                None => "{\"records\":0,\"first\":null}".to_string(),
            },
            feats.join(","),
            lists.join(",")
        )?;
        return Ok(());
    }
    writeln!(stdout, "file:        {name}")?;
    let container = match compression {
        crate::io::Compression::Gzip => match super::gz::block_compression(path, read) {
            Some((true, members)) => {
                format!("GZIP stream, block-compressed ({members} members of whole records)")
            }
            Some((false, 1)) => "GZIP stream (one member)".to_string(),
            Some((false, members)) => {
                format!("GZIP stream ({members} members, not at record boundaries)")
            }
            None => "GZIP stream".to_string(),
        },
        crate::io::Compression::Zlib => "ZLIB stream".to_string(),
        _ => "uncompressed".to_string(),
    };
    writeln!(
        stdout,
        "format:      {} frames, {container}, {} payloads",
        framing.name(),
        payload.name()
    )?;
    writeln!(stdout, "records:     {}", sizes.n)?;
    if pads.n > 0 {
        writeln!(
            stdout,
            "padding:     {} pad frames, {} bytes ({:.2}% of the file)",
            pads.n,
            pads.sum,
            100.0 * pads.sum as f64 / file_bytes.max(1) as f64
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
    if let Some((id, f)) = first_unknown {
        writeln!(
            stdout,
            "unknown:     {unknown} {} fields {} does not have (first: field {}, wire type {}, in record {id})",
            if unknown == 1 { "record holds" } else { "records hold" },
            payload.message(),
            f.number,
            f.wire_type as u8
        )?;
    }
    if payload == PayloadKind::Raw {
        return Ok(());
    }
    let width = schema
        .context
        .keys()
        .chain(schema.lists.keys())
        .map(|n| quoted(n).chars().count())
        .max()
        .unwrap_or(4)
        .max(7);
    let label = if payload == PayloadKind::SequenceExample {
        "context features"
    } else {
        "features"
    };
    writeln!(stdout, "{label}:    {}", schema.context.len())?;
    if !schema.context.is_empty() {
        writeln!(
            stdout,
            "  {:<width$}  {:<24}  {:>8}  values per record (min / mean / max)",
            "name", "kind", "records"
        )?;
    }
    for (n, s) in &schema.context {
        writeln!(
            stdout,
            "  {:<width$}  {:<24}  {:>8}  {} / {:.1} / {}",
            quoted(n),
            kinds_text(s),
            s.values.n,
            s.values.min(),
            s.values.mean(),
            s.values.max
        )?;
    }
    if payload == PayloadKind::SequenceExample {
        writeln!(stdout, "feature lists:    {}", schema.lists.len())?;
        if !schema.lists.is_empty() {
            writeln!(
                stdout,
                "  {:<width$}  {:<24}  {:>8}  steps (min / mean / max)  values per step (min / mean / max)",
                "name", "kind", "records"
            )?;
        }
        for (n, (steps, s)) in &schema.lists {
            writeln!(
                stdout,
                "  {:<width$}  {:<24}  {:>8}  {} / {:.1} / {}  {} / {:.1} / {}",
                quoted(n),
                kinds_text(s),
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
            return Err(Failure::Usage(format!(
                "{name} is read as {payload} but {first_name} as {first_kind}: one spec reads one payload; name it with --payload"
            )));
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
