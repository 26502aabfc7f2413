//! benchgate-api: the JSON wire types shared by the server, the agent and the CLI — the agent
//! protocol and comparison results exactly as `benchgate analyze --json` prints them. serde only.

pub mod agent;
pub mod context;
pub mod counts;
pub mod fingerprint;
pub mod format;
pub mod markdown;
pub mod metric;
pub mod paths;
pub mod payload;
pub mod results;
pub mod rules;
pub mod sample;
pub mod suite;
pub mod token;

pub use counts::{Counts, GateOn};
pub use fingerprint::MachineFingerprint;
pub use format::Format;
pub use metric::{Direction, FailOn};
pub use results::{
    AnalysisReport, BenchmarkResult, ClaimAnswer, HodgesLehmannResult, ModeShift, ModeSummary,
    VerdictKind,
};
pub use rules::{AppliedRule, BenchmarkRule, RuleSet};
pub use sample::{Measurement, Side};
pub use token::RunnerToken;
