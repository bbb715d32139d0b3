//! `inspect --message`: records of any message, summed per field path: in
//! how many records each path is set, how many values it holds (fewest and
//! most in one record), its declared type, a closed enum's unknown values
//! and an open enum's numbers without a name, and the records holding fields
//! the schema does not know.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use super::inspect::{stat_json, write_sizes};
use super::stat::Stat;
use super::{next_or_fail, report, CmdResult, Failure, InspectCommand};
use crate::frame::{ErrorPolicy, Framing};
use crate::io::Compression;
use crate::names::quoted;
use crate::schema::{FieldRef, MessageRef, Schema, ValueRef};
use crate::DecodeError;

/// What one field path held over the records.
#[derive(Debug, Default, Clone)]
struct PathStats {
    /// The declared type (a message's or enum's full name).
    type_name: String,
    repeated: bool,
    /// Records in which it is set.
    records: u64,
    /// Its values per record where set.
    values: Stat,
    /// Enum values with no name (open enums).
    unnamed: u64,
    /// The last record counted (a path met twice in one record through a
    /// repeated message counts the record once), and its values so far.
    last: Option<u64>,
    pending: u64,
}

impl PathStats {
    /// Counts the last record's values.
    fn finish(&mut self) {
        if self.last.take().is_some() {
            self.values.add(self.pending);
            self.pending = 0;
        }
    }
}

/// What `inspect --message` found in one file, or summed over several.
#[derive(Debug, Default)]
struct Report {
    name: String,
    framing: Option<Framing>,
    compression: Option<Compression>,
    sizes: Stat,
    paths: BTreeMap<String, PathStats>,
    /// Records holding unknown fields (anywhere), and the first: (record,
    /// path of its message, field number, wire type).
    unknown: u64,
    first_unknown: Option<(u64, String, u32, u8)>,
}

impl Report {
    fn add_record(&mut self, id: u64, view: &MessageRef<'_>) -> Result<(), DecodeError> {
        let mut unknown = None;
        self.walk(id, view, "", &mut unknown)?;
        if let Some((path, number, wire)) = unknown {
            self.unknown += 1;
            if self.first_unknown.is_none() {
                self.first_unknown = Some((id, path, number, wire));
            }
        }
        Ok(())
    }

    fn walk(
        &mut self,
        id: u64,
        m: &MessageRef<'_>,
        prefix: &str,
        unknown: &mut Option<(String, u32, u8)>,
    ) -> Result<(), DecodeError> {
        if unknown.is_none() {
            if let Some(f) = m.unknown_fields().next() {
                let f = f?;
                *unknown = Some((prefix.to_owned(), f.number, f.value.wire_type() as u8));
            }
        }
        for f in m.fields() {
            let path = if prefix.is_empty() {
                f.name().to_owned()
            } else {
                format!("{prefix}.{}", f.name())
            };
            self.field(id, &f, &path, unknown)?;
        }
        Ok(())
    }

    fn field(
        &mut self,
        id: u64,
        f: &FieldRef<'_>,
        path: &str,
        unknown: &mut Option<(String, u32, u8)>,
    ) -> Result<(), DecodeError> {
        if !f.is_set()? {
            return Ok(());
        }
        let mut n = 0u64;
        let mut unnamed = 0u64;
        let mut children = Vec::new();
        if f.is_map() {
            // The last entry of a key is the one that counts.
            let mut entries: Vec<(ValueRef<'_>, ValueRef<'_>)> = Vec::new();
            for e in f.entries() {
                let (k, v) = e?;
                match entries.iter_mut().find(|(key, _)| *key == k) {
                    Some(slot) => slot.1 = v,
                    None => entries.push((k, v)),
                }
            }
            n = entries.len() as u64;
            for (_, v) in entries {
                if let ValueRef::Message(m) = v {
                    children.push(m);
                }
            }
        } else {
            for v in f.values() {
                match v? {
                    ValueRef::Message(m) => children.push(m),
                    ValueRef::Enum(_, None) => unnamed += 1,
                    _ => {}
                }
                n += 1;
            }
        }
        let stats = self
            .paths
            .entry(path.to_owned())
            .or_insert_with(|| PathStats {
                type_name: f.declared_type(),
                repeated: f.is_repeated(),
                ..PathStats::default()
            });
        stats.unnamed += unnamed;
        if stats.last != Some(id) {
            stats.finish();
            stats.last = Some(id);
            stats.records += 1;
        }
        // Another occurrence of the path in the same record (inside a
        // repeated message) adds its values to the record's.
        stats.pending += n;
        let child_prefix = if f.is_map() {
            format!("{path}.value")
        } else {
            path.to_owned()
        };
        for m in children {
            self.walk(id, &m, &child_prefix, unknown)?;
        }
        Ok(())
    }

    /// Counts the last record's values of every path.
    fn finish(&mut self) {
        for s in self.paths.values_mut() {
            s.finish();
        }
    }

    fn merge(&mut self, other: Report) {
        self.sizes.merge(&other.sizes);
        self.unknown += other.unknown;
        if self.first_unknown.is_none() {
            self.first_unknown = other.first_unknown;
        }
        for (path, s) in other.paths {
            let mine = self.paths.entry(path).or_insert_with(|| PathStats {
                type_name: s.type_name.clone(),
                repeated: s.repeated,
                ..PathStats::default()
            });
            mine.records += s.records;
            mine.values.merge(&s.values);
            mine.unnamed += s.unnamed;
        }
    }

    fn write_text(&self, schema: &Schema, stdout: &mut dyn Write) -> CmdResult {
        writeln!(stdout, "file:        {}", self.name)?;
        if let (Some(framing), Some(compression)) = (self.framing, self.compression) {
            writeln!(
                stdout,
                "format:      {} frames, {}, {} payloads",
                framing.name(),
                match compression {
                    Compression::None | Compression::Auto => "uncompressed".to_owned(),
                    c => format!("{} compressed", c.name()),
                },
                schema.message_name()
            )?;
        }
        writeln!(stdout, "records:     {}", self.sizes.n)?;
        write_sizes(stdout, &self.sizes, &Stat::default(), 0, "")?;
        if self.unknown > 0 {
            if let Some((id, path, number, wire)) = &self.first_unknown {
                writeln!(
                    stdout,
                    "unknown:     {} records hold fields the schema does not have (first: field {number}, wire type {wire}, in {} of record {id})",
                    self.unknown,
                    if path.is_empty() { "the message" } else { path }
                )?;
            }
        }
        writeln!(stdout, "fields:      {} paths set", self.paths.len())?;
        let width = self
            .paths
            .keys()
            .map(|p| p.chars().count())
            .max()
            .unwrap_or(0);
        for (path, s) in &self.paths {
            write!(
                stdout,
                "  {path:<width$}  {}{}  in {} of {} records",
                if s.repeated && !s.type_name.starts_with("map<") {
                    "repeated "
                } else {
                    ""
                },
                s.type_name,
                s.records,
                self.sizes.n
            )?;
            if s.repeated {
                write!(
                    stdout,
                    ", {} to {} values (mean {:.1})",
                    s.values.min(),
                    s.values.max,
                    s.values.mean()
                )?;
            }
            if s.unnamed > 0 {
                write!(stdout, ", {} enum numbers without a name", s.unnamed)?;
            }
            writeln!(stdout)?;
        }
        Ok(())
    }

    fn write_json(&self, schema: &Schema, stdout: &mut dyn Write) -> CmdResult {
        let mut out = format!(
            "{{\"file\":{},\"message\":{},\"records\":{},\"data_bytes\":{}",
            quoted(self.name.as_bytes()),
            quoted(schema.message_name().as_bytes()),
            self.sizes.n,
            stat_json(&self.sizes)
        );
        if let (Some(framing), Some(compression)) = (self.framing, self.compression) {
            out.push_str(&format!(
                ",\"framing\":{},\"compression\":{}",
                quoted(framing.name().as_bytes()),
                quoted(compression.name().as_bytes())
            ));
        }
        out.push_str(&format!(
            ",\"unknown_fields\":{{\"records\":{}",
            self.unknown
        ));
        if let Some((id, path, number, wire)) = &self.first_unknown {
            out.push_str(&format!(
                ",\"first\":{{\"record\":{id},\"path\":{},\"field\":{number},\"wire_type\":{wire}}}",
                quoted(path.as_bytes())
            ));
        }
        out.push_str("},\"fields\":{");
        for (i, (path, s)) in self.paths.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&format!(
                "{}:{{\"type\":{},\"repeated\":{},\"records\":{},\"values\":{},\"unnamed_enum_values\":{}}}",
                quoted(path.as_bytes()),
                quoted(s.type_name.as_bytes()),
                s.repeated,
                s.records,
                stat_json(&s.values),
                s.unnamed
            ));
        }
        out.push_str("}}\n");
        stdout.write_all(out.as_bytes())?;
        Ok(())
    }
}

/// Reads every record of `path` by `schema`.
fn gather(
    path: &Path,
    c: &InspectCommand,
    schema: &Schema,
    stderr: &mut dyn Write,
) -> Result<Report, Failure> {
    let (mut source, _) = c.read.open_with_payload(path, ErrorPolicy::Fail, stderr)?;
    let mut r = Report {
        name: source.name().to_string(),
        framing: Some(source.framing()),
        compression: Some(source.compression()),
        ..Report::default()
    };
    while let Some(record) = next_or_fail(&mut source, stderr)? {
        if crate::frame::is_pad(record.data) {
            continue;
        }
        r.sizes.add(record.data.len() as u64);
        let view = MessageRef::new(schema, record.data, record.data_offset);
        let checked = view.check().and_then(|()| r.add_record(record.id, &view));
        if let Err(e) = checked {
            report(stderr, &record.context(e));
            return Err(Failure::Data);
        }
    }
    r.finish();
    Ok(r)
}

/// `inspect --message`: a report per file (one file, or `--per-file`), else
/// one over all of them.
pub(super) fn run(
    c: &InspectCommand,
    schema: &Schema,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    if c.per_file || c.files.len() == 1 {
        return super::each_file(&c.files, |file| {
            let r = gather(file, c, schema, stderr)?;
            if c.json {
                r.write_json(schema, stdout)
            } else {
                r.write_text(schema, stdout)
            }
        });
    }
    let mut all = Report {
        name: format!("{} files", c.files.len()),
        ..Report::default()
    };
    for file in &c.files {
        all.merge(gather(file, c, schema, stderr)?);
    }
    if c.json {
        all.write_json(schema, stdout)
    } else {
        all.write_text(schema, stdout)
    }
}
