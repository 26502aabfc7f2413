//! benchgate-profile: folded stacks from `perf script`, capped to a size a server can keep,
//! ranked by each function's change in share of samples, and drawn as a differential flame graph.
//!
//! Callgrind output (gungraun's) folds too, exactly. Pure code: running perf is the harness's job (`benchgate_harness::profile`).

mod callgrind;
mod cap;
mod changes;
mod collapse;
mod error;
mod folded;
mod svg;

pub use callgrind::collapse_callgrind;
pub use cap::{Capped, DEEPER_FRAMES, Limits, OTHER_STACKS};
pub use changes::{FunctionChange, changes};
pub use collapse::{
    collapse_perf_script, collapse_perf_script_from, lacks_symbols, unresolved_share,
};
pub use error::ProfileError;
pub use folded::Folded;
pub use svg::differential_svg;
