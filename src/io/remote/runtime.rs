//! The tokio runtime and the store clients of this process, made anew in a
//! child after a `fork`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use super::store::{Client, StoreKey};

/// The runtime and clients of this process.
pub(super) struct Process {
    pid: u32,
    runtime: tokio::runtime::Runtime,
    pub(super) stores: Mutex<HashMap<StoreKey, Client>>,
}

static PROCESS: Mutex<Option<Arc<Process>>> = Mutex::new(None);

/// This process's runtime and clients: made on first use, and made anew in
/// a child after a `fork` (the parent's are forgotten there, never dropped:
/// their threads do not exist in the child, and their connections are the
/// parent's).
pub(super) fn process() -> Arc<Process> {
    let pid = std::process::id();
    let mut slot = PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = slot.as_ref() {
        if p.pid == pid {
            return Arc::clone(p);
        }
    }
    if let Some(parent) = slot.take() {
        std::mem::forget(parent);
    }
    // rustls needs its crypto provider chosen once per process (`ring`:
    // see Cargo.toml); an error means one is already installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("recordwire-io")
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("recordwire: the I/O runtime cannot start: {e}"));
    let p = Arc::new(Process {
        pid,
        runtime,
        stores: Mutex::default(),
    });
    *slot = Some(Arc::clone(&p));
    p
}

/// Runs `fut` on this process's runtime and waits for it: from any thread,
/// also one of another tokio runtime (the future then runs on ours while
/// this thread waits).
pub(crate) fn block_on<F>(fut: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let process = process();
    if tokio::runtime::Handle::try_current().is_err() {
        return process.runtime.block_on(fut);
    }
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    process.runtime.spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv()
        .unwrap_or_else(|_| panic!("recordwire: an I/O task ended without its result"))
}

/// Spawns `fut` on this process's runtime.
pub(crate) fn spawn<F>(fut: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    process().runtime.spawn(fut)
}
