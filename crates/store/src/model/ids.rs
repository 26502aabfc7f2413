//! Typed ids, so a job id is never passed where a runner id is meant.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, sqlx::Type)]
        #[serde(transparent)]
        #[sqlx(transparent)]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_type!(
    /// A repository row (not GitHub's repository id).
    RepositoryId
);
id_type!(
    /// A registered runner machine.
    RunnerId
);
id_type!(
    /// One A/B comparison.
    ComparisonId
);
id_type!(
    /// One job in the queue.
    JobId
);
id_type!(
    /// One outbox row (a pending GitHub write).
    OutboxId
);

/// Proof of holding a job's (or outbox row's) lease; every fenced write names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LeaseToken(pub String);

impl LeaseToken {
    /// A fresh random token (UUID v4, 122 random bits).
    pub fn generate() -> Self {
        LeaseToken(uuid::Uuid::new_v4().simple().to_string())
    }

    /// The token as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for LeaseToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
