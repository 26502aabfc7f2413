//! The canary loop: planted and A/A canaries on idle runners, scored as they finish.

use chrono::Utc;
use tokio_util::sync::CancellationToken;

use crate::Domain;

/// Runs until `cancel` fires: scores finished canaries, yields running ones to waiting work,
/// and starts due ones on idle runners.
pub async fn run(app: Domain, cancel: CancellationToken) {
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(app.config.canary_tick) => {}
        }
        if let Err(e) = crate::audit::tick(&app, Utc::now()).await {
            tracing::warn!(error = %e, "canary pass failed; trying again next tick");
        }
    }
}
