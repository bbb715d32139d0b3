//! How long a remote operation may take: every open, read and write of an
//! object is one [`Op`], bounded in total by the `retry_timeout` storage
//! option (its requests, their retries and their bodies), and told to the
//! observer set with [`observe_waits`] once it has waited [`NOTE_AFTER`].

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::Either;
use tokio::time::Instant;

use super::errors::{seconds, store_error};
use crate::error::Error;

/// How long an operation waits before the observer of [`observe_waits`] is
/// told of it.
pub const NOTE_AFTER: Duration = Duration::from_secs(5);

/// An operation on a remote object that has waited [`NOTE_AFTER`] and is
/// still waiting, as told to the observer of [`observe_waits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait<'a> {
    /// The URL the request is for.
    pub url: &'a str,
    /// The request waited for (`GET of bytes 0..65536 (opening the
    /// object)`, …).
    pub request: &'a str,
    /// How long the operation has waited.
    pub waited: Duration,
    /// When it will give up (the `retry_timeout` storage option).
    pub limit: Duration,
}

/// A function told of slow operations ([`Wait`]), from any thread.
pub type WaitObserver = Arc<dyn Fn(Wait<'_>) + Send + Sync>;

static OBSERVER: std::sync::RwLock<Option<WaitObserver>> = std::sync::RwLock::new(None);

/// Sets (or, with `None`, removes) the process's observer of operations on
/// remote objects that have waited [`NOTE_AFTER`] (5 s) without an answer:
/// each is told once. The library says nothing itself; the `recordwire`
/// command prints a note on stderr.
pub fn observe_waits(observer: Option<WaitObserver>) {
    *OBSERVER.write().unwrap_or_else(|e| e.into_inner()) = observer;
}

fn wait_observer() -> Option<WaitObserver> {
    OBSERVER.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// One operation: its start, its bound, and whether it was told of.
#[derive(Debug, Clone)]
pub(crate) struct Op {
    start: Instant,
    limit: Duration,
    noted: Arc<AtomicBool>,
}

/// Why an operation failed.
#[derive(Debug)]
pub(crate) enum Failed {
    /// The store's error.
    Store(object_store::Error),
    /// The operation's time ran out.
    TimedOut,
    /// An error of recordwire's before the request (the client could not
    /// be made, no credentials).
    Ready(Error),
}

/// A failed step of an [`Op`]: what failed, which request, and when.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) failed: Failed,
    pub(crate) request: String,
    pub(crate) elapsed: Duration,
    pub(crate) limit: Duration,
}

impl Failure {
    /// Whether the store said there is no such object.
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(
            self.failed,
            Failed::Store(object_store::Error::NotFound { .. })
        )
    }
}

impl Op {
    /// An operation that starts now and may take `limit` in all.
    pub(crate) fn new(limit: Duration) -> Op {
        Op {
            start: Instant::now(),
            limit,
            noted: Arc::default(),
        }
    }

    /// `err`, met before the step `request` could start.
    pub(crate) fn failed(&self, err: Error, request: &str) -> Failure {
        Failure {
            failed: Failed::Ready(err),
            request: request.to_string(),
            elapsed: self.start.elapsed(),
            limit: self.limit,
        }
    }

    /// Runs `fut`, the step `request` (`GET of bytes …`) of this operation
    /// on `url`, until it ends or the operation's time runs out; tells the
    /// observer once when the operation has waited [`NOTE_AFTER`].
    pub(crate) async fn run<T, F>(&self, url: &str, request: &str, fut: F) -> Result<T, Failure>
    where
        F: Future<Output = Result<T, object_store::Error>>,
    {
        let fail = |failed| Failure {
            failed,
            request: request.to_string(),
            elapsed: self.start.elapsed(),
            limit: self.limit,
        };
        let deadline = self.start + self.limit;
        let noted = async {
            let fut = std::pin::pin!(fut);
            let note = std::pin::pin!(tokio::time::sleep_until(self.start + NOTE_AFTER));
            match futures_util::future::select(fut, note).await {
                Either::Left((out, _)) => out,
                Either::Right(((), fut)) => {
                    self.note(url, request);
                    fut.await
                }
            }
        };
        match tokio::time::timeout_at(deadline, noted).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(fail(Failed::Store(e))),
            Err(_) => Err(fail(Failed::TimedOut)),
        }
    }

    fn note(&self, url: &str, request: &str) {
        if self.noted.swap(true, Ordering::Relaxed) {
            return;
        }
        if let Some(observer) = wait_observer() {
            observer(Wait {
                url,
                request,
                waited: self.start.elapsed(),
                limit: self.limit,
            });
        }
    }
}

impl Failure {
    /// The failure as an `io_error` of `url` (the kind and message of
    /// [`super::io_error`] for what the store said; for the rest, the
    /// request, the real time it took and the retries).
    pub(crate) fn into_error(self, url: &Arc<str>) -> Error {
        let Failure {
            failed,
            request,
            elapsed,
            limit,
        } = self;
        let err = match failed {
            Failed::TimedOut => Error::io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "{request} timed out after {}: no complete answer (the storage option \
                     retry_timeout, now {}, bounds each request with its retries)",
                    seconds(elapsed),
                    seconds(limit),
                ),
            )),
            Failed::Store(e) => store_error(e, &request, elapsed),
            Failed::Ready(e) => e,
        };
        err.with_file(Arc::clone(url))
    }
}
