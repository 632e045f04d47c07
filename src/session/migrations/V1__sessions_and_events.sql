-- Sessions and their append-only events: the PostgreSQL store behind `serve --store`.
--
-- `sessions.next_seq` is the session's sequence counter: an append locks the row
-- (SELECT … FOR UPDATE), checks the counter is where its writer last saw it, inserts
-- its events from there and moves the counter on, all in one transaction, so numbers
-- never repeat or skip whatever the number of writers.
CREATE TABLE sessions (
    id          text        PRIMARY KEY,
    next_seq    bigint      NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per event. `body` is the event exactly as the file store writes it (json,
-- not jsonb: key order kept); `kind`, `call_id`, `host`, `decision` and `at` are
-- copied out of it so the events can be queried by session, time, host and decision.
-- A compaction marks the events of finished calls `compacted` instead of deleting
-- them: the session's state is rebuilt from the others, and the trail stays whole.
CREATE TABLE events (
    session_id  text        NOT NULL REFERENCES sessions (id),
    seq         bigint      NOT NULL,
    at          timestamptz NOT NULL,
    kind        text        NOT NULL,
    call_id     text,
    host        text,
    decision    text,
    body        json        NOT NULL,
    compacted   boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (session_id, seq)
);

CREATE INDEX events_at ON events (at);
CREATE INDEX events_host_at ON events (host, at);
CREATE INDEX events_decision_at ON events (decision, at);
CREATE INDEX events_call ON events (session_id, call_id, seq);
CREATE INDEX events_waiting ON events (session_id) WHERE kind = 'PermissionRequested' AND NOT compacted;
