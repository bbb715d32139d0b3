//! What a path names: a remote object's URL, a `file://` URL, a scheme
//! recordwire reads or not, an object rather than a bucket or a folder.

use std::path::Path;

use object_store::path::Path as ObjectPath;

use crate::error::Error;

/// Whether `path` names a remote object (`s3://`, `gs://`, `az://`, `abfs://`,
/// `http(s)://`, …) rather than a local file. `file://` URLs are local. A
/// URL of a scheme recordwire does not read (`ftp://…`) counts as remote
/// too, so that opening or writing it is refused with "unsupported scheme"
/// ([`ErrorKind::Usage`](crate::ErrorKind::Usage)) rather than looked for
/// as a local path.
///
/// ```
/// use recordwire::io::remote::is_remote;
///
/// assert!(is_remote("s3://bucket/train-0.tfrecord"));
/// assert!(is_remote("https://example.com/data/train.tfrecord"));
/// assert!(is_remote("ftp://example.com/train.tfrecord"));
/// assert!(!is_remote("file:///data/train.tfrecord"));
/// assert!(!is_remote("data/train.tfrecord"));
/// ```
pub fn is_remote(path: impl AsRef<Path>) -> bool {
    path.as_ref()
        .to_str()
        .and_then(url_scheme)
        .is_some_and(|s| !s.eq_ignore_ascii_case("file"))
}

/// The local path of a `file://` URL, when `path` is one: `file:///PATH` or
/// `file://localhost/PATH`, percent-escapes decoded. `?` and `#` are part of
/// the path (wildcards, names), not a query or a fragment.
///
/// ```
/// use std::path::Path;
/// use recordwire::io::remote::file_url_path;
///
/// assert_eq!(file_url_path("file:///data/x.tfrecord").as_deref(), Some(Path::new("/data/x.tfrecord")));
/// assert_eq!(file_url_path("file:///data/a-?.tfrecord").as_deref(), Some(Path::new("/data/a-?.tfrecord")));
/// assert_eq!(file_url_path("file:///my%20data/x").as_deref(), Some(Path::new("/my data/x")));
/// assert_eq!(file_url_path("/data/x.tfrecord"), None);
/// ```
pub fn file_url_path(path: impl AsRef<Path>) -> Option<std::path::PathBuf> {
    let s = path.as_ref().to_str()?;
    if !url_scheme(s)?.eq_ignore_ascii_case("file") {
        return None;
    }
    let rest = &s[s.find("://")? + 3..];
    let rest = match rest.get(..9) {
        Some(host) if host.eq_ignore_ascii_case("localhost") => &rest[9..],
        _ => rest,
    };
    if !rest.starts_with('/') {
        return None;
    }
    let decoded: Vec<u8> = percent_decode(rest.as_bytes());
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Some(std::ffi::OsString::from_vec(decoded).into())
    }
    #[cfg(not(unix))]
    {
        String::from_utf8(decoded).ok().map(Into::into)
    }
}

/// `%XX` escapes decoded (a `%` not followed by two hex digits is kept).
fn percent_decode(s: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' && i + 2 < s.len() {
            if let (Some(h), Some(l)) = (hex(s[i + 1]), hex(s[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// The `file://` URL of the local path `path`, for names found by a glob
/// of a `file://` pattern (as `Url::from_file_path` writes it).
pub(crate) fn file_url_of(path: &Path) -> Option<String> {
    url::Url::from_file_path(path).ok().map(String::from)
}

/// The schemes recordwire reads, lower case.
pub(super) const SCHEMES: [&str; 10] = [
    "s3", "s3a", "gs", "az", "abfs", "abfss", "azure", "http", "https", "file",
];

/// The scheme of `s` when it is a URL (`SCHEME://…`, the scheme two or
/// more letters, digits, `+`, `-` or `.` starting with a letter, so that a
/// Windows drive `C://` is not one), whether recordwire reads it or not.
pub(super) fn url_scheme(s: &str) -> Option<&str> {
    let (scheme, rest) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if rest.is_empty()
        || scheme.len() < 2
        || !first_ok
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    Some(scheme)
}

/// The usage error for a URL of a scheme recordwire does not read.
pub(super) fn unsupported_scheme(url: &str, scheme: &str) -> Error {
    Error::usage(format!(
        "unsupported scheme {scheme}://: recordwire reads s3://, gs://, az:// (abfs://, abfss://, \
         azure://), http(s):// and file:// URLs"
    ))
    .with_file(url)
}

/// The usage error for a URL that names a bucket, a container or a folder
/// of a store rather than an object, when `url` is one.
pub(super) fn not_an_object(url: &str, parsed: &url::Url, path: &ObjectPath) -> Option<Error> {
    let scheme = parsed.scheme().to_ascii_lowercase();
    let what = match scheme.as_str() {
        "s3" | "s3a" | "gs" => "a bucket",
        "az" | "abfs" | "abfss" | "azure" => "a container",
        _ => return None,
    };
    let what = if path.as_ref().is_empty() {
        what
    } else if url.ends_with('/') {
        "a folder"
    } else {
        return None;
    };
    let glob = if url.ends_with('/') {
        format!("{url}*")
    } else {
        format!("{url}/*")
    };
    Some(Error::usage(format!("names {what}, not an object: use {glob}")).with_file(url))
}
