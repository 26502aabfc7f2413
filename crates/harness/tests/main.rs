//! The harness's integration tests, built as one test binary: each file beside this one is a
//! module. Run one file's tests with `cargo test -p benchgate-harness --test integration compare::`.

mod analyze;
mod analyze_procedures;
mod compare;
mod formats_behaviour;
mod formats_errors;
mod formats_fixtures;
mod formats_new;
mod formats_real;
mod limits;
mod process;
mod profile;
mod runs_properties;
mod sandbox;
mod verdicts_real;

/// Tests that measure, and tests that load both cores (perf, valgrind), take turns: side by side
/// on a small machine a measurement would measure the other test instead of its commands.
pub fn measuring() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
