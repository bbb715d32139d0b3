//! `export --message`: records read by a schema given at run time, written
//! to Parquet as columns by field path ([`crate::schema::Columns`]): those
//! of `--columns`, or without it each top-level field of the message as a
//! column (a flat table, which Parquet readers show best; `--columns ""`
//! gives the whole message as one struct column instead).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use super::parquet::MessageOut;
use super::{out_failure, usage, ExportOptions, Feed, TempOut};
use crate::cli::output::Destination;
use crate::cli::{report, CmdResult, ExportFormat, Failure, EXIT_USAGE};
use crate::error::Error;
use crate::schema::{ColumnOptions, Columns, Schema};

/// Runs `export` with `--message` (`out`, `temp`: the output and its
/// temporary name, checked already; `format`: as OUT or --format says).
pub(super) fn export(
    o: &ExportOptions<'_>,
    schema: &Schema,
    (out, temp): (&Path, &Path),
    destination: Destination,
    format: ExportFormat,
    start: Instant,
    stderr: &mut dyn Write,
) -> CmdResult {
    if o.spec.is_some() {
        return Err(usage("--spec reads tf.Example features; --message reads every record by its schema: give one"));
    }
    if format != ExportFormat::Parquet {
        return Err(usage(
            "--message exports Parquet only (nested columns): OUT.parquet or --format parquet",
        ));
    }
    let mut paths: Vec<&str> = match o.columns {
        Some(c) => c.iter().map(String::as_str).collect(),
        None => schema.field_names().collect(),
    };
    if paths.is_empty() {
        return Err(usage(format!(
            "{} has no fields: there is nothing to export",
            schema.message_name()
        )));
    }
    let options = ColumnOptions::default().with_enum_names(o.enum_names);
    let mut columns =
        Columns::new(schema, &paths, &options).map_err(|e| Failure::Fatal(e, EXIT_USAGE))?;
    // A message of no fields (`google.protobuf.Empty`) is a struct of no
    // fields, which Parquet cannot store: left out of the top-level fields,
    // refused where asked for.
    let arrow = columns.arrow_schema();
    let empty: Vec<&str> = arrow
        .fields()
        .iter()
        .zip(&paths)
        .filter(|(f, _)| has_empty_struct(f.data_type()))
        .map(|(_, p)| *p)
        .collect();
    if !empty.is_empty() {
        if o.columns.is_some() {
            return Err(usage(format!(
                "--columns {}: holds a message of no fields, which Parquet cannot store; give paths around it",
                empty.join(",")
            )));
        }
        for p in &empty {
            let _ = writeln!(
                stderr,
                "note: field {p} left out: it holds a message of no fields, which Parquet cannot store"
            );
        }
        paths.retain(|p| !empty.contains(p));
        if paths.is_empty() {
            return Err(usage(format!(
                "{}: no field Parquet can store",
                schema.message_name()
            )));
        }
        columns =
            Columns::new(schema, &paths, &options).map_err(|e| Failure::Fatal(e, EXIT_USAGE))?;
    }
    let file = std::fs::File::create_new(temp)
        .map_err(|e| out_failure(Error::io(e).with_file(temp.display().to_string())))?;
    let guard = TempOut {
        path: temp.to_path_buf(),
        dir: false,
        kept: false,
    };
    let mut sink = MessageOut::create(
        file,
        temp,
        &columns.arrow_schema(),
        schema.message_name(),
        o.batch_size,
    )
    .map_err(out_failure)?;
    let mut feed = Feed::new(o.inputs, o.read, None, true);
    let mut rows = 0u64;
    loop {
        feed.fill(o.batch_size, stderr)?;
        if feed.pending.is_empty() {
            break;
        }
        let records = feed.records();
        let batch = match columns.decode(records.iter().map(|r| (r.data, r.data_offset))) {
            Ok(b) => b,
            Err(e) => {
                // The record the error is in, by its offset.
                let at = e.offset().unwrap_or(0);
                let e = match records.iter().find(|r| r.data_offset <= at && at <= r.end) {
                    Some(r) => {
                        let e = e.with_record(r.id);
                        match r.file {
                            Some(f) => e.with_file(std::sync::Arc::clone(f)),
                            None => e,
                        }
                    }
                    None => e,
                };
                report(stderr, &e);
                return Err(Failure::Data);
            }
        };
        rows += batch.num_rows() as u64;
        sink.write(&batch).map_err(out_failure)?;
    }
    let bytes = sink.finish().map_err(out_failure)?;
    guard.commit(out).map_err(out_failure)?;
    destination.finish()?;
    let _ = writeln!(
        stderr,
        "exported {rows} record{} ({} file{}) as {}, {} column{}, {bytes} bytes written to {} (parquet) in {:.2}s",
        if rows == 1 { "" } else { "s" },
        o.inputs.len(),
        if o.inputs.len() == 1 { "" } else { "s" },
        schema.message_name(),
        paths.len(),
        if paths.len() == 1 { "" } else { "s" },
        o.out.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Whether `t` is or holds a struct of no fields.
fn has_empty_struct(t: &arrow_schema::DataType) -> bool {
    use arrow_schema::DataType;
    match t {
        DataType::Struct(fields) => {
            fields.is_empty() || fields.iter().any(|f| has_empty_struct(f.data_type()))
        }
        DataType::LargeList(f) | DataType::List(f) | DataType::Map(f, _) => {
            has_empty_struct(f.data_type())
        }
        _ => false,
    }
}
