//! How to read frames: which CRCs to check and what to do after damage.

use crate::names::OptionName;

/// What a reader does after a damaged frame (docs/FORMAT.md §8.4, "Reading after damage").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorPolicy {
    /// Stop at the first error, after delivering every valid record before it.
    #[default]
    Fail,
    /// Skip damaged frames and go on.
    ///
    /// A frame with a bad data CRC is skipped whole; after a bad length CRC the
    /// reader searches forward, byte by byte, for the next 12 bytes that form a
    /// TFRecord header with a valid length CRC. Truncation, OFRecord errors
    /// (there is no CRC to resynchronise on) and decompression errors still end
    /// the iteration.
    Skip {
        /// Give up (end the iteration) after yielding this many errors; `None`
        /// for no limit. `Some(0)` behaves like `Some(1)`: the first error is
        /// still reported, then the iteration ends.
        max_errors: Option<u64>,
    },
}

impl ErrorPolicy {
    /// [`ErrorPolicy::Skip`] with no limit on the number of errors.
    pub const fn skip() -> Self {
        ErrorPolicy::Skip { max_errors: None }
    }

    /// The name used on the command line: `fail` or `skip`.
    pub fn name(&self) -> &'static str {
        match self {
            ErrorPolicy::Fail => "fail",
            ErrorPolicy::Skip { .. } => "skip",
        }
    }
}

/// `fail` or `skip` (the latter parses with no error limit).
impl OptionName for ErrorPolicy {
    const WHAT: &'static str = "error policy";
    const ALL: &'static [Self] = &[ErrorPolicy::Fail, ErrorPolicy::skip()];
    fn name(self) -> &'static str {
        ErrorPolicy::name(&self)
    }
}

crate::option_names!(ErrorPolicy);

/// Options of the frame readers: which CRCs to check and the [`ErrorPolicy`].
///
/// The default checks both CRCs and fails at the first error.
///
/// ```
/// use recordwire::frame::{ErrorPolicy, ReadOptions};
///
/// let opts = ReadOptions::default()
///     .with_data_crc(false)
///     .with_policy(ErrorPolicy::Skip { max_errors: Some(10) });
/// assert!(opts.check_length_crc);
/// assert!(!opts.check_data_crc);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Check the masked CRC of each TFRecord length (default `true`).
    ///
    /// Without it a damaged length is taken at its word, which usually turns
    /// into a `truncated_data` error, and [`ErrorPolicy::Skip`] cannot
    /// resynchronise.
    pub check_length_crc: bool,
    /// Check the masked CRC of each TFRecord's data (default `true`).
    pub check_data_crc: bool,
    /// What to do after an error (default [`ErrorPolicy::Fail`]).
    pub policy: ErrorPolicy,
    /// Skip pad frames (docs/FORMAT.md §7.5, [`is_pad`](super::is_pad)) without giving
    /// them a record id (default `true`).
    pub skip_pads: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            check_length_crc: true,
            check_data_crc: true,
            policy: ErrorPolicy::Fail,
            skip_pads: true,
        }
    }
}

impl ReadOptions {
    /// Sets [`skip_pads`](Self::skip_pads).
    #[must_use]
    pub fn with_skip_pads(mut self, skip: bool) -> Self {
        self.skip_pads = skip;
        self
    }

    /// The default options: both CRCs checked, [`ErrorPolicy::Fail`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`check_length_crc`](Self::check_length_crc).
    #[must_use]
    pub fn with_length_crc(mut self, check: bool) -> Self {
        self.check_length_crc = check;
        self
    }

    /// Sets [`check_data_crc`](Self::check_data_crc).
    #[must_use]
    pub fn with_data_crc(mut self, check: bool) -> Self {
        self.check_data_crc = check;
        self
    }

    /// Sets both CRC checks at once.
    #[must_use]
    pub fn with_crc(self, check: bool) -> Self {
        self.with_length_crc(check).with_data_crc(check)
    }

    /// Sets the [`policy`](Self::policy).
    #[must_use]
    pub fn with_policy(mut self, policy: ErrorPolicy) -> Self {
        self.policy = policy;
        self
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn defaults() {
        let o = ReadOptions::default();
        assert!(o.check_length_crc && o.check_data_crc);
        assert_eq!(o.policy, ErrorPolicy::Fail);
        assert_eq!(ErrorPolicy::default(), ErrorPolicy::Fail);
    }

    #[test]
    fn policy_names() {
        assert_eq!("fail".parse::<ErrorPolicy>(), Ok(ErrorPolicy::Fail));
        assert_eq!("skip".parse::<ErrorPolicy>(), Ok(ErrorPolicy::skip()));
        let err = "ignore".parse::<ErrorPolicy>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown error policy `ignore` (expected one of: fail, skip)"
        );
        assert_eq!(ErrorPolicy::skip().to_string(), "skip");
    }
}
