//! Progress on long work, on stderr when it is a terminal (indicatif), and
//! nothing otherwise: not in a pipe, a log file or the tests.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Files smaller than this finish before a bar would be worth drawing.
const MIN_BYTES: u64 = 64 << 20;

/// A progress bar over the bytes of one input.
pub(super) struct Progress(Option<ProgressBar>);

impl Progress {
    /// A bar for `what` (`verifying`, `indexing`, …) over `total` bytes of
    /// input, shown when stderr is a terminal and the input is large; with no
    /// total (a stream), a counter of records.
    pub(super) fn new(what: &str, total: Option<u64>) -> Self {
        Self::new_for(std::io::stderr().is_terminal(), what, total)
    }

    /// A bar over the records of `source`: its bytes when it is a file in
    /// memory, else a count of records.
    pub(super) fn over(what: &str, source: &crate::io::Source) -> Self {
        Self::new(what, source.as_file().map(|f| f.len() as u64))
    }

    fn new_for(terminal: bool, what: &str, total: Option<u64>) -> Self {
        if !terminal || total.is_some_and(|t| t < MIN_BYTES) {
            return Progress(None);
        }
        let bar = match total {
            Some(total) => ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
                .with_style(
                    ProgressStyle::with_template(
                        "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                ),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(
                ProgressStyle::with_template("{msg} {pos} records ({per_sec})")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        };
        bar.set_message(what.to_owned());
        Progress(Some(bar))
    }

    /// `done` bytes of the input are done (or one more record, for a stream).
    pub(super) fn update(&self, done: u64) {
        if let Some(bar) = &self.0 {
            if bar.length().is_some() {
                bar.set_position(done);
            } else {
                bar.inc(1);
            }
        }
    }

    /// Removes the bar (dropping the progress does too).
    pub(super) fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// The bar goes however the work ends: done, an error, a closed output.
impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Draws one bar, on a terminal, over the whole-object reads that opening
/// remote shards makes to build their indexes (objects without a sidecar
/// or a cached index): every command that opens them shows it.
#[cfg(feature = "remote")]
pub(super) fn observe_remote_fetches() {
    if std::io::stderr().is_terminal() {
        let bar = FetchBar::new(ProgressDrawTarget::stderr);
        let observer = move |e: crate::io::remote::Fetch<'_>| bar.event(e);
        crate::io::remote::observe_fetches(Some(std::sync::Arc::new(observer)));
    }
}

/// Notes on stderr, once per URL, an operation on a remote object that
/// has waited [`NOTE_AFTER`](crate::io::remote::NOTE_AFTER) without an
/// answer: the URL, the request, and when it will give up. Any stderr, a
/// terminal or not: a silent wait of many seconds looks like a hang.
#[cfg(feature = "remote")]
pub(super) fn note_remote_waits() {
    use std::io::Write;
    let told = std::sync::Mutex::new(std::collections::HashSet::<String>::new());
    let observer = move |w: crate::io::remote::Wait<'_>| {
        let first = told
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(w.url.to_owned());
        if first {
            let _ = writeln!(std::io::stderr(), "{}", wait_note(&w));
        }
    };
    crate::io::remote::observe_waits(Some(std::sync::Arc::new(observer)));
}

/// The note of [`note_remote_waits`].
#[cfg(feature = "remote")]
fn wait_note(w: &crate::io::remote::Wait<'_>) -> String {
    format!(
        "note: {}: still waiting for {} after {:.1} s (giving up after {:.1} s: the storage option retry_timeout)",
        w.url,
        w.request,
        w.waited.as_secs_f64(),
        w.limit.as_secs_f64()
    )
}

/// The bar of [`observe_remote_fetches`]: the bytes of every read under
/// way, shown once they add up to a large input and gone when the last
/// read ends.
#[cfg(feature = "remote")]
struct FetchBar {
    target: fn() -> ProgressDrawTarget,
    state: std::sync::Mutex<Fetching>,
}

#[cfg(feature = "remote")]
#[derive(Default)]
struct Fetching {
    bar: Option<ProgressBar>,
    reads: usize,
    len: u64,
    done: u64,
}

#[cfg(feature = "remote")]
impl FetchBar {
    fn new(target: fn() -> ProgressDrawTarget) -> Self {
        FetchBar {
            target,
            state: Default::default(),
        }
    }

    fn event(&self, event: crate::io::remote::Fetch<'_>) {
        use crate::io::remote::Fetch;
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Fetch::Started { len, .. } => {
                s.reads += 1;
                s.len += len;
            }
            Fetch::Read { n, .. } => s.done += n,
            Fetch::Ended { unread, .. } => {
                s.reads = s.reads.saturating_sub(1);
                s.len = s.len.saturating_sub(unread);
            }
        }
        if s.reads == 0 {
            if let Some(bar) = s.bar.take() {
                bar.finish_and_clear();
            }
            *s = Fetching::default();
            return;
        }
        if s.bar.is_none() && s.len >= MIN_BYTES {
            let bar = ProgressBar::with_draw_target(Some(s.len), (self.target)()).with_style(
                ProgressStyle::with_template(
                    "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.set_message("fetching remote shards to index them");
            s.bar = Some(bar);
        }
        if let Some(bar) = &s.bar {
            bar.set_length(s.len);
            bar.set_position(s.done);
        }
    }

    /// The bar's position and length, if it is shown.
    #[cfg(test)]
    fn shown(&self) -> Option<(u64, Option<u64>)> {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.bar.as_ref().map(|b| (b.position(), b.length()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "remote")]
    #[test]
    fn one_bar_over_the_remote_reads_of_opening_while_they_last() {
        use crate::io::remote::Fetch;
        let bar = FetchBar::new(ProgressDrawTarget::hidden);
        let (a, b) = ("s3://b/a", "s3://b/b");
        bar.event(Fetch::Started {
            url: a,
            len: 40 << 20,
        });
        bar.event(Fetch::Read { url: a, n: 8 << 20 });
        assert_eq!(bar.shown(), None, "40 MiB: too little for a bar");
        bar.event(Fetch::Started {
            url: b,
            len: 40 << 20,
        });
        assert_eq!(bar.shown(), Some((8 << 20, Some(80 << 20))));
        bar.event(Fetch::Read {
            url: a,
            n: 32 << 20,
        });
        // The first read stops early (damage): what it left is not awaited.
        bar.event(Fetch::Ended {
            url: a,
            unread: 20 << 20,
        });
        assert_eq!(bar.shown(), Some((40 << 20, Some(60 << 20))));
        bar.event(Fetch::Read {
            url: a,
            n: 20 << 20,
        });
        bar.event(Fetch::Ended { url: b, unread: 0 });
        assert_eq!(bar.shown(), None, "gone with the last read");
        bar.event(Fetch::Started {
            url: a,
            len: 1 << 30,
        });
        assert_eq!(bar.shown(), Some((0, Some(1 << 30))), "a new bar from zero");
    }

    #[test]
    fn a_bar_only_on_a_terminal_and_for_large_inputs() {
        assert!(Progress::new_for(false, "x", Some(1 << 40)).0.is_none());
        assert!(Progress::new_for(true, "x", Some(1 << 20)).0.is_none());
        assert!(Progress::new_for(true, "x", Some(1 << 30)).0.is_some());
        assert!(Progress::new_for(true, "x", None).0.is_some());
        let p = Progress::new_for(true, "x", Some(1 << 30));
        p.update(1 << 29);
        assert_eq!(p.0.as_ref().map(ProgressBar::position), Some(1 << 29));
        p.finish();
    }
}
