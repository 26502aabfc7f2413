//! benchgate-claims integration tests: one binary.

mod pr_bodies;
