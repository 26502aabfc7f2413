//! The loop of main's history: anchor comparisons when due, and culprit searches woken.

use chrono::Utc;
use tokio_util::sync::CancellationToken;

use crate::{Domain, main_history};

/// How often the server looks for series whose anchor comparison is due.
const ANCHOR_TICK: std::time::Duration = std::time::Duration::from_secs(60);

/// Schedules due anchor comparisons until `cancel` fires. Two replicas may both look; a second
/// comparison of the same commits is refused as long as the first is active.
pub async fn run(state: Domain, cancel: CancellationToken) {
    loop {
        match main_history::schedule_due_anchors(
            &state.store,
            state.config.max_attempts,
            Utc::now(),
        )
        .await
        {
            Ok(0) => {}
            Ok(n) => tracing::info!(scheduled = n, "scheduled anchor comparisons"),
            Err(e) => {
                tracing::warn!(error = %e, "anchor schedule: store error; trying again next tick")
            }
        }
        if let Err(e) = main_history::wake_searches(&state.store).await {
            tracing::warn!(error = %e, "culprit searches: store error; trying again next tick");
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(ANCHOR_TICK) => {}
        }
    }
}
