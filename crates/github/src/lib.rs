//! benchgate-github: webhook signature checks and event parsing, the `/rebench` command parser,
//! the `.benchgate.toml` parser, and the GitHub API client.
