//! The framing a file's name suggests (docs/FORMAT.md §1.6).

use std::path::Path;

use crate::frame::Framing;

/// Name endings of a whole-file compression, removed before the name is read
/// for a framing: `.gz`, `.gzip`, `.zlib`, `.zz` (as `pack` and `convert`
/// read them for the output's compression).
const COMPRESSION_SUFFIXES: &[&str] = &[".gz", ".gzip", ".zlib", ".zz"];

/// The framing that the name of the file at `path` suggests, if any
/// (docs/FORMAT.md §1.6).
///
/// Only the file name counts (not the directories), without case, and
/// without one compression ending (`.gz`, `.gzip`, `.zlib`, `.zz`). Of the
/// rest, the extension in a broad sense, the part after the last `.` (the
/// whole name when there is no `.`), is cut into words at `_` and `-`:
///
/// - its last word that is `tfrecord`, `tfrecords` or `tfrec` (TFRecord) or
///   `ofrecord` or `ofrecords` (OFRecord) decides: `train.tfrecord`,
///   `data.tfrec.gz`, TFX's `data_tfrecord-00000-of-00001.gz`, TFDS's
///   `mnist-train.tfrecord-00000-of-00001`, `val.ofrecord`
///   (`train.tfrecord.jsonl` and `train.tfrecord.idx` say nothing);
/// - else a name that is `part-` and digits only, as OneFlow names its
///   shards (`part-0`, `part-00012`), suggests OFRecord (`part-m-00000`, the
///   Hadoop TFRecord writer's, and `part-00000.gz` do not);
/// - else nothing (`None`): `-` (stdin), `events.out.tfevents.1`, `data.bin`.
///
/// The readers use the hint only where the first bytes are not certain
/// ([`detect_with_hint`](crate::frame::detect_with_hint)), and `pack` and
/// `convert` to choose the framing they write.
///
/// ```
/// use recordwire::frame::Framing;
/// use recordwire::io::framing_hint;
///
/// assert_eq!(framing_hint("data/train.tfrecord".as_ref()), Some(Framing::TfRecord));
/// assert_eq!(framing_hint("data_tfrecord-00000-of-00001.gz".as_ref()), Some(Framing::TfRecord));
/// assert_eq!(framing_hint("x.OFRecord".as_ref()), Some(Framing::OfRecord));
/// assert_eq!(framing_hint("part-00000".as_ref()), Some(Framing::OfRecord));
/// assert_eq!(framing_hint("part-m-00000".as_ref()), None);
/// assert_eq!(framing_hint("tfrecord_to.ofrecord".as_ref()), Some(Framing::OfRecord));
/// assert_eq!(framing_hint("-".as_ref()), None);
/// ```
pub fn framing_hint(path: &Path) -> Option<Framing> {
    if path == Path::new("-") {
        return None;
    }
    let name = path.file_name()?.to_string_lossy().to_lowercase();
    let stem = COMPRESSION_SUFFIXES
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .unwrap_or(&name);
    let extension = stem.rsplit('.').next().unwrap_or(stem);
    let by_word = extension.rsplit(['_', '-']).find_map(|word| match word {
        "tfrecord" | "tfrecords" | "tfrec" => Some(Framing::TfRecord),
        "ofrecord" | "ofrecords" => Some(Framing::OfRecord),
        _ => None,
    });
    if by_word.is_some() {
        return by_word;
    }
    let oneflow_part = name
        .strip_prefix("part-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    oneflow_part.then_some(Framing::OfRecord)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let tf = Some(Framing::TfRecord);
        let of = Some(Framing::OfRecord);
        for (name, want) in [
            ("train.tfrecord", tf),
            ("train.tfrecords", tf),
            ("train.tfrec", tf),
            ("dir.ofrecord/train.TFRecord", tf),
            ("train.tfrecord.gz", tf),
            ("train.tfrecord.GZ", tf),
            ("train.tfrecord.zlib", tf),
            ("train.tfrecord.zz", tf),
            ("train.tfrecord.gzip", tf),
            ("data_tfrecord-00000-of-00001.gz", tf),
            ("data_tfrecord_eval.gz", tf),
            ("data_tfrecord.gz", tf),
            ("mnist-train.tfrecord-00000-of-00001", tf),
            ("x.ofrecord", of),
            ("x.ofrecord.gz", of),
            ("x.ofrecords", of),
            ("part-0", of),
            ("part-00000", of),
            ("dataset/part-12", of),
            ("ofrecord_from.tfrecord", tf),
            ("tfrecord_to.ofrecord", of),
            ("ofrecord_from_tfrecord", tf),
            ("train.tfrecord-00000-of-00001.gz", tf),
            // No hint.
            ("x.tfrecord.jsonl", None),
            ("x.tfrecord.idx", None),
            ("x.tfrecord.rwindex", None),
            ("x.ofrecord.txt", None),
            ("ofrecord.part-0", None),
            ("train.tfrecord.00001", None),
            ("part-", None),
            ("part-m-00000", None),
            ("part-r-00000", None),
            ("part-00000.gz", None),
            ("part-0.txt", None),
            ("xpart-0", None),
            ("transformed_examples-00000-of-00001.gz", None),
            ("translate_ende_wmt32k-train-00511-of-00512", None),
            ("events.out.tfevents.test", None),
            ("mytfrecord.bin", None),
            ("data", None),
            ("-", None),
            ("", None),
        ] {
            assert_eq!(framing_hint(Path::new(name)), want, "{name}");
        }
    }
}
