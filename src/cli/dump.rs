//! `dump`: the annotated wire tree of records, offset by offset.

use std::io::Write;
use std::path::Path;

use super::{next_or_fail, report, CmdResult, Failure, ReadArgs};
use crate::frame::{ErrorPolicy, Framing};
use crate::io::Compression;

/// Runs `dump` on one file: every record, or only record `only`; each as
/// its payload, or as the message of `schema`.
pub(super) fn dump(
    path: &Path,
    only: Option<u64>,
    read: &ReadArgs,
    schema: Option<&crate::schema::Schema>,
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
        match schema {
            Some(s) => s.message_name(),
            None => payload.name(),
        }
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
        let r = match schema {
            Some(s) => crate::dump::dump_by_schema(&mut text, s, record.data, record.data_offset),
            None => crate::dump::dump_payload(&mut text, payload, record.data, record.data_offset),
        };
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
