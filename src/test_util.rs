//! Helpers shared by the unit tests.

use proptest::test_runner::Config;

/// The proptest configuration of the unit tests: proptest's defaults
/// natively; under miri, which is several thousand times slower and (with
/// its isolation) cannot read `proptest-regressions/` or the environment,
/// a handful of cases and no regression file.
pub(crate) fn proptest_config() -> Config {
    if cfg!(miri) {
        Config {
            cases: 8,
            failure_persistence: None,
            ..Config::default()
        }
    } else {
        Config::default()
    }
}
