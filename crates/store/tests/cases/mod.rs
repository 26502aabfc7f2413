//! Contract cases: each takes a fresh, migrated store.

mod audit;
mod floors;
mod github_app;
mod github_lifecycle;
mod lifecycle;
mod main_history;
mod outbox;
mod queue;
mod runners;
mod samples;
mod webhooks;

pub use audit::*;
pub use floors::*;
pub use github_app::*;
pub use github_lifecycle::*;
pub use lifecycle::*;
pub use main_history::*;
pub use outbox::*;
pub use queue::*;
pub use runners::*;
pub use samples::*;
pub use webhooks::*;
