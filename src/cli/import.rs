//! `recordwire import`: the rows of a Parquet file written as records, by
//! the one Arrow-to-records mapping ([`crate::arrow::RecordEncoder`]).

use std::io::Write;
#[cfg(feature = "export")]
use std::path::Path;

use super::args::ImportCommand;
use super::{CmdResult, Failure};

/// Runs `import`.
#[cfg(feature = "export")]
pub(super) fn run(c: &ImportCommand, stdout: &mut dyn Write, stderr: &mut dyn Write) -> CmdResult {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    use super::write::{input_error, output_framing, with_blocks, write_failure, Output};
    use crate::arrow::RecordEncoder;
    use crate::encode::WriterOptions;
    use crate::error::Error;
    use crate::frame::Framing;
    use crate::view::PayloadKind;

    let (input, output) = (c.input.as_path(), c.output.as_path());
    let name = input.display().to_string();
    let framing = output_framing(None, c.payload, output, "--payload", || match c.payload {
        Some(PayloadKind::OfRecord) => Framing::OfRecord,
        _ => Framing::TfRecord,
    })?;
    let ofrecord = match (c.payload, framing) {
        (Some(PayloadKind::OfRecord), _) | (None, Framing::OfRecord) => true,
        (Some(PayloadKind::Example), _) | (None, Framing::TfRecord) => false,
        (Some(other), _) => {
            return Err(Failure::Usage(format!(
                "--payload {}: import writes example or ofrecord records (a \
                 sequence_example or raw payload has no one column form)",
                other.name()
            )))
        }
    };
    let fatal = |e: Error| Failure::Fatal(e, super::EXIT_USAGE);
    let destination = super::output::Destination::new(output, c.store.storage_pairs())?;
    let file =
        std::fs::File::open(input).map_err(|e| fatal(Error::io(e).with_file(name.as_str())))?;
    let opened = ParquetRecordBatchReaderBuilder::try_new(file).and_then(|builder| {
        let total = u64::try_from(builder.metadata().file_metadata().num_rows()).ok();
        let batch = usize::try_from(c.batch_size).unwrap_or(8192);
        Ok((total, builder.with_batch_size(batch).build()?))
    });
    let (total, reader) =
        opened.map_err(|e| input_error(stderr, "parquet_error", &name, None, &e.to_string()))?;
    let schema = arrow_array::RecordBatchReader::schema(&reader);
    let mut encoder = RecordEncoder::new(schema.as_ref(), ofrecord).map_err(|e| {
        input_error(
            stderr,
            "encode_error",
            &name,
            None,
            &crate::arrow::error_message(&e),
        )
    })?;
    let options = with_blocks(
        WriterOptions::new(framing)
            .with_compression(crate::encode::output_compression(c.compression, output)),
        c.gzip_blocks,
    );
    let mut out = Output::open(destination.local(), options, stdout)?;
    let progress = super::progress::Progress::new("importing", None);
    let mut record = Vec::new();
    let mut rows = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| {
            input_error(
                stderr,
                "parquet_error",
                &name,
                Some(rows + 1),
                &e.to_string(),
            )
        })?;
        for r in 0..batch.num_rows() {
            record.clear();
            encoder.encode(&batch, r, &mut record).map_err(|e| {
                input_error(
                    stderr,
                    "encode_error",
                    &name,
                    None,
                    &crate::arrow::error_message(&e),
                )
            })?;
            out.write(&record).map_err(|e| write_failure(output, e))?;
            rows += 1;
            progress.update(rows);
        }
    }
    progress.finish();
    out.finish().map_err(|e| write_failure(output, e))?;
    destination.finish()?;
    if output != Path::new("-") {
        let _ = writeln!(
            stderr,
            "{name}: {rows} row{} imported into {}{}",
            if rows == 1 { "" } else { "s" },
            output.display(),
            match total {
                Some(t) if t != rows => format!(" (the file says {t})"),
                _ => String::new(),
            }
        );
    }
    Ok(())
}

/// Without the `export` feature there is no Parquet reader.
#[cfg(not(feature = "export"))]
pub(super) fn run(c: &ImportCommand, stdout: &mut dyn Write, stderr: &mut dyn Write) -> CmdResult {
    let _ = (c, stdout, stderr);
    Err(Failure::Usage(
        "import reads Parquet: this recordwire was built without the `export` feature".into(),
    ))
}
