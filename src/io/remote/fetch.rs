//! The observer of the whole-object reads that opening makes to build an
//! index ([`Fetch`]).

use std::sync::Arc;

/// What a whole-object read made while opening (to build an index: the
/// one streaming pass over an object without a sidecar or a cached index)
/// reports to the observer set with [`observe_fetches`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch<'a> {
    /// A read of `len` bytes of the object at `url` starts.
    Started {
        /// The object's URL.
        url: &'a str,
        /// The bytes it will read.
        len: u64,
    },
    /// `n` more bytes of the object at `url` came.
    Read {
        /// The object's URL.
        url: &'a str,
        /// The bytes.
        n: u64,
    },
    /// The read is over (done, failed or dropped), `unread` of its bytes
    /// not read.
    Ended {
        /// The object's URL.
        url: &'a str,
        /// The bytes of `len` that were not read.
        unread: u64,
    },
}

/// A function told of whole-object reads ([`Fetch`]), from any thread.
pub type FetchObserver = Arc<dyn Fn(Fetch<'_>) + Send + Sync>;

static OBSERVER: std::sync::RwLock<Option<FetchObserver>> = std::sync::RwLock::new(None);

/// Sets (or, with `None`, removes) the process's observer of the
/// whole-object reads that opening makes to build an index: what
/// `recordwire`'s progress bar for remote shards is drawn from. Streams the
/// caller reads itself ([`RemoteReader::new`](super::RemoteReader::new)) are not reported.
pub fn observe_fetches(observer: Option<FetchObserver>) {
    *OBSERVER.write().unwrap_or_else(|e| e.into_inner()) = observer;
}

/// The observer, if one is set.
pub(crate) fn fetch_observer() -> Option<FetchObserver> {
    OBSERVER.read().unwrap_or_else(|e| e.into_inner()).clone()
}
