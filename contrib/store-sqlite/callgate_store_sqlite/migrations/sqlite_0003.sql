-- version 3: every session records the principal that opened it (the operating-system
-- user, or an integrator's name such as a bearer token's under `callgate serve --http`);
-- what the store gives back to a session is only its principal's. Sessions recorded
-- before this version keep NULL: they count as the local user's, never a token's.

ALTER TABLE sessions ADD COLUMN principal TEXT;
CREATE INDEX sessions_principal ON sessions (principal, workspace, started);
