//! The order modes: how one epoch's ids are ordered (see the module docs of
//! [`crate::order`], Modes), and their names ([`ModeName`]).

use crate::names::OptionName;

/// How one epoch's ids are ordered before the epoch is split into parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// File order.
    #[default]
    Sequential,
    /// A uniformly distributed permutation of all records.
    Shuffle,
    /// Records grouped by the page in which they start, the groups shuffled,
    /// file order inside each group.
    PageAware {
        /// The page size in bytes (see [`DEFAULT_PAGE_SIZE`](super::DEFAULT_PAGE_SIZE)); not 0.
        page_size: u64,
    },
    /// The page-aware group order cut into windows of `window` pages, the
    /// records of each window shuffled together.
    QuasiRandom {
        /// The page size in bytes; not 0.
        page_size: u64,
        /// The number of pages shuffled together (open at once): 1 to
        /// [`MAX_WINDOW`](super::MAX_WINDOW).
        window: u32,
    },
}

impl Mode {
    /// The mode's name on the command line: `sequential`, `shuffle`,
    /// `page-aware` or `quasi-random` (its [`ModeName`]'s name).
    pub fn name(&self) -> &'static str {
        ModeName::from(*self).name()
    }

    /// The page size of the page modes.
    pub fn page_size(&self) -> Option<u64> {
        match *self {
            Mode::PageAware { page_size } | Mode::QuasiRandom { page_size, .. } => Some(page_size),
            Mode::Sequential | Mode::Shuffle => None,
        }
    }
}

/// The name of a [`Mode`] without its parameters: what the command line's
/// `--mode` takes (`sequential`, `shuffle`, `page-aware`, `quasi-random`),
/// the page size and window coming from options of their own.
///
/// ```
/// use recordwire::order::{Mode, ModeName};
///
/// let name: ModeName = "quasi-random".parse()?;
/// assert_eq!(name, ModeName::QuasiRandom);
/// assert_eq!(name.to_string(), "quasi-random");
/// assert_eq!(name.mode(4096, 8), Mode::QuasiRandom { page_size: 4096, window: 8 });
/// // The modes without pages ignore the page size and window.
/// assert_eq!(ModeName::Shuffle.mode(4096, 8), Mode::Shuffle);
/// // And back: a mode's name.
/// assert_eq!(ModeName::from(Mode::PageAware { page_size: 512 }), ModeName::PageAware);
///
/// let err = "random".parse::<ModeName>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "unknown order mode `random` (expected one of: sequential, shuffle, page-aware, quasi-random)"
/// );
/// # Ok::<(), recordwire::names::ParseNameError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ModeName {
    /// `sequential`: [`Mode::Sequential`].
    #[default]
    Sequential,
    /// `shuffle`: [`Mode::Shuffle`].
    Shuffle,
    /// `page-aware`: [`Mode::PageAware`].
    PageAware,
    /// `quasi-random`: [`Mode::QuasiRandom`].
    QuasiRandom,
}

impl ModeName {
    /// Every mode name, in the order the command line lists them.
    pub const ALL: [ModeName; 4] = [
        ModeName::Sequential,
        ModeName::Shuffle,
        ModeName::PageAware,
        ModeName::QuasiRandom,
    ];

    /// The name on the command line: `sequential`, `shuffle`, `page-aware`
    /// or `quasi-random`.
    pub const fn name(self) -> &'static str {
        match self {
            ModeName::Sequential => "sequential",
            ModeName::Shuffle => "shuffle",
            ModeName::PageAware => "page-aware",
            ModeName::QuasiRandom => "quasi-random",
        }
    }

    /// The mode of this name: the page modes take `page_size` (both) and
    /// `window` (quasi-random), the others ignore them. Nothing is checked
    /// here; [`Order::new`](super::Order::new) rejects a page size of 0 and a
    /// window out of range.
    pub const fn mode(self, page_size: u64, window: u32) -> Mode {
        match self {
            ModeName::Sequential => Mode::Sequential,
            ModeName::Shuffle => Mode::Shuffle,
            ModeName::PageAware => Mode::PageAware { page_size },
            ModeName::QuasiRandom => Mode::QuasiRandom { page_size, window },
        }
    }
}

impl From<Mode> for ModeName {
    fn from(mode: Mode) -> ModeName {
        match mode {
            Mode::Sequential => ModeName::Sequential,
            Mode::Shuffle => ModeName::Shuffle,
            Mode::PageAware { .. } => ModeName::PageAware,
            Mode::QuasiRandom { .. } => ModeName::QuasiRandom,
        }
    }
}

/// `sequential`, `shuffle`, `page-aware` or `quasi-random`.
impl OptionName for ModeName {
    const WHAT: &'static str = "order mode";
    const ALL: &'static [Self] = &ModeName::ALL;
    fn name(self) -> &'static str {
        ModeName::name(self)
    }
}

crate::option_names!(ModeName);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::names::ParseNameError;

    #[test]
    fn names_round_trip() {
        for name in ModeName::ALL {
            assert_eq!(name.name().parse::<ModeName>(), Ok(name));
            assert_eq!(name.to_string(), name.name());
            // The mode it makes has that name, and so does the mode.
            let mode = name.mode(100, 3);
            assert_eq!(ModeName::from(mode), name);
            assert_eq!(mode.name(), name.name());
        }
        assert_eq!(ModeName::default().mode(1, 1), Mode::default());
    }

    #[test]
    fn the_command_line_names() {
        let names: Vec<&str> = ModeName::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(
            names,
            ["sequential", "shuffle", "page-aware", "quasi-random"]
        );
    }

    #[test]
    fn modes_take_their_parameters() {
        assert_eq!(ModeName::Sequential.mode(4096, 8), Mode::Sequential);
        assert_eq!(ModeName::Shuffle.mode(4096, 8), Mode::Shuffle);
        assert_eq!(
            ModeName::PageAware.mode(4096, 8),
            Mode::PageAware { page_size: 4096 }
        );
        assert_eq!(
            ModeName::QuasiRandom.mode(512, 8),
            Mode::QuasiRandom {
                page_size: 512,
                window: 8
            }
        );
    }

    #[test]
    fn unknown_names_are_errors() {
        for bad in ["", "Shuffle", "page_aware", "quasi", "sequential "] {
            let err = bad.parse::<ModeName>().unwrap_err();
            assert_eq!(
                err,
                ParseNameError::new(
                    "order mode",
                    bad,
                    "sequential, shuffle, page-aware, quasi-random"
                )
            );
        }
        assert_eq!(
            "page_aware".parse::<ModeName>().unwrap_err().to_string(),
            "unknown order mode `page_aware` (expected one of: sequential, shuffle, page-aware, quasi-random)"
        );
    }
}
