//! The calibration loop.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::{Domain, calibration};

/// Background loop: records sessions lost at completion, and re-calibrates every (runner,
/// repository) whose last A/A session is older than the interval, on the base of the
/// repository's newest comparison.
pub async fn run(app: Domain, cancel: CancellationToken) {
    let interval = app.config.calibration_interval;
    let period = (interval / 4).clamp(Duration::from_secs(1), Duration::from_secs(600));
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(period) => {}
        }
        if let Err(e) = calibration::record_missing_sessions(&app.store, interval).await {
            tracing::error!(error = ?e, "cannot record missing calibration sessions");
        }
        if let Err(e) = calibration::recalibrate_due(&app, interval).await {
            tracing::error!(error = ?e, "scheduled calibration failed");
        }
    }
}
