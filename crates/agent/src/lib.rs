//! benchgate-agent: the runner daemon. Claims jobs from the server, checks out and builds both
//! sides, runs the rounds through the harness and uploads each round as it finishes.
