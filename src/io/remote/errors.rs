//! A store's errors as one line: the request, the real time it took and
//! the retries, without `object_store`'s own summary.

use std::time::Duration;

use crate::error::Error;

/// A store error met by `request` after `elapsed`, as an `io_error`: its
/// kind (not found, permission denied, …) and a one-line message that
/// names the request, the real time it took (all its retries; the store's
/// own text counts from its last attempt) and the retries.
pub(crate) fn store_error(e: object_store::Error, request: &str, elapsed: Duration) -> Error {
    use std::io::ErrorKind as K;
    let (kind, message) = match &e {
        object_store::Error::NotFound { .. } => (K::NotFound, "not found".to_string()),
        object_store::Error::PermissionDenied { .. } => {
            (K::PermissionDenied, "permission denied".to_string())
        }
        object_store::Error::Unauthenticated { .. } => (
            K::PermissionDenied,
            "not authenticated (check the credentials)".to_string(),
        ),
        object_store::Error::Precondition { .. } => (
            K::Other,
            "the object changed since it was opened (its ETag differs): reopen it".to_string(),
        ),
        other if one_line(other).contains("URL scheme is not allowed") => (
            K::PermissionDenied,
            format!(
                "{request}: a plain http:// URL is refused unless allowed: set the storage \
                 option allow_http=true (or AWS_ALLOW_HTTP=true in the environment)"
            ),
        ),
        other => {
            let (cause, retries) = retried(other);
            let after = match retries {
                Some(n) if n > 0 => format!(" and {n} retries"),
                _ => String::new(),
            };
            (
                K::Other,
                format!(
                    "{request} failed after {}{after}: {cause}",
                    seconds(elapsed)
                ),
            )
        }
    };
    Error::io(std::io::Error::new(kind, message))
}

/// The longest cause a message quotes (a server's error page can be long).
const MAX_CAUSE: usize = 300;

/// What went wrong, on one line, without `object_store`'s retry summary
/// (`Error performing GET URL in 2.5s, after 10 retries, …`, whose time
/// counts from the last attempt), and the retries it made when it says.
pub(super) fn retried(e: &(dyn std::error::Error + 'static)) -> (String, Option<usize>) {
    let mut at: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = at {
        let text = err.to_string();
        if let Some(rest) = text.strip_prefix("Error performing ") {
            let retries = rest
                .split_once(", after ")
                .and_then(|(_, r)| r.split_whitespace().next())
                .and_then(|n| n.parse().ok());
            let cause = match err.source() {
                Some(inner) => one_line(inner),
                None => rest
                    .split_once(" - ")
                    .map_or(text.clone(), |(_, c)| c.to_string()),
            };
            return (shorten(cause), retries);
        }
        at = err.source();
    }
    (shorten(one_line(e)), None)
}

fn shorten(mut text: String) -> String {
    if text.len() > MAX_CAUSE {
        let mut end = MAX_CAUSE;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// The error and its causes on one line.
pub(super) fn one_line(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text.replace('\n', " ")
}

/// `d` in seconds, as the messages write it (`2.0 s`).
pub(crate) fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;

    /// `object_store`'s summary of a retried request (whose time counts
    /// from its last attempt only) gives way to the cause and the retries.
    #[test]
    fn the_store_summary_of_retries_is_replaced_by_the_cause() {
        #[derive(Debug)]
        struct Text(&'static str, Option<Box<Text>>);
        impl fmt::Display for Text {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for Text {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|t| t as _)
            }
        }
        let e = Text(
            "Generic S3 error: Error performing GET http://h/b/k in 2.5s, after 10 retries, \
             max_retries: 10, retry_timeout: 180s  - Server returned non-2xx status code: 503",
            Some(Box::new(Text(
                "Error performing GET http://h/b/k in 2.5s, after 10 retries, max_retries: 10, \
                 retry_timeout: 180s  - Server returned non-2xx status code: 503",
                Some(Box::new(Text(
                    "Server returned non-2xx status code: 503",
                    None,
                ))),
            ))),
        );
        assert_eq!(
            retried(&e),
            (
                "Server returned non-2xx status code: 503".to_string(),
                Some(10)
            )
        );
        let store = object_store::Error::Generic {
            store: "S3",
            source: Box::new(e),
        };
        assert_eq!(
            store_error(store, "GET of bytes 0..10", Duration::from_millis(9300)).to_string(),
            "[io_error]: GET of bytes 0..10 failed after 9.3 s and 10 retries: \
             Server returned non-2xx status code: 503"
        );
    }
}
