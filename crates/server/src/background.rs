//! Background tasks that run beside the HTTP server (reaper, outbox worker, calibration).

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::AppState;

/// The running background tasks; stopped together at shutdown.
pub struct BackgroundTasks {
    cancel: CancellationToken,
    tasks: JoinSet<()>,
}

impl BackgroundTasks {
    /// Asks every task to stop and waits for them.
    pub async fn stop(mut self) {
        self.cancel.cancel();
        while self.tasks.join_next().await.is_some() {}
    }
}

/// Starts every background task. Each task loops until `cancel` fires.
pub fn spawn(state: AppState) -> BackgroundTasks {
    let cancel = CancellationToken::new();
    let mut tasks = JoinSet::new();
    // Each background module adds itself here: tasks.spawn(module::run(state.clone(), cancel.clone()));
    tasks.spawn(crate::reaper::run(state.clone(), cancel.clone()));
    tasks.spawn(crate::calibration::run(state.clone(), cancel.clone()));
    tasks.spawn(crate::main_history::run(state.clone(), cancel.clone()));
    crate::github_app::spawn_tasks(&state, &cancel, &mut tasks);
    let _ = &state;
    BackgroundTasks { cancel, tasks }
}
