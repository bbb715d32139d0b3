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

#[cfg(test)]
mod tests {
    use super::*;

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
