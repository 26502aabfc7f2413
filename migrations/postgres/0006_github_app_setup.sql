-- The GitHub App setup (manifest flow): the `state` values handed out by /github/setup, so any
-- replica can check the callback, and the App's credentials the flow returned (one row).
CREATE TABLE github_setup_states (
    state_hash TEXT PRIMARY KEY,                -- SHA-256 of the state; the state itself is never stored
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at    TIMESTAMPTZ
);

CREATE TABLE github_app_credentials (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    app_id          BIGINT NOT NULL,
    slug            TEXT NOT NULL,
    html_url        TEXT NOT NULL,
    owner_login     TEXT,
    webhook_secret  TEXT NOT NULL,
    private_key_pem TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);
