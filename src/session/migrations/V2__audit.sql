-- The audit trail in one place.
--
-- `machine` and `user_name`: who decided each event (the replica that appended it, as
-- `session::audit::Origin` names it); empty for events written before this version.
-- `audit_received`: the audit records other deciders handed over from their outbox
-- (`hook --hub`), each once by machine, session and sequence number.
ALTER TABLE events ADD COLUMN machine text NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN user_name text NOT NULL DEFAULT '';

CREATE TABLE audit_received (
    machine     text        NOT NULL,
    session_id  text        NOT NULL,
    seq         bigint      NOT NULL,
    at          timestamptz NOT NULL,
    body        json        NOT NULL,
    PRIMARY KEY (machine, session_id, seq)
);

CREATE INDEX audit_received_at ON audit_received (at, session_id, seq);
CREATE INDEX events_audit_order ON events (at, session_id, seq);
