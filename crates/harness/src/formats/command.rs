//! The `command` format: the runner measures the whole benchmark process itself (wall clock,
//! `wait4` rusage), so there is no output to parse. These are the names its samples carry;
//! hyperfine's per-run times use the same ones, since they measure the same thing.

/// Wall-clock time of one run of the process, from a monotonic clock.
pub const WALL_TIME: &str = "wall_time";
/// Unit of [`WALL_TIME`].
pub const WALL_TIME_UNIT: &str = super::unit::NS;
/// CPU time of one run: user plus system time of the child, from rusage.
pub const CPU_TIME: &str = "cpu_time";
/// Unit of [`CPU_TIME`].
pub const CPU_TIME_UNIT: &str = super::unit::NS;
/// Peak resident set size of the child (rusage `ru_maxrss`, converted to bytes).
pub const PEAK_RSS: &str = "peak_rss";
/// Unit of [`PEAK_RSS`].
pub const PEAK_RSS_UNIT: &str = super::unit::BYTES;
