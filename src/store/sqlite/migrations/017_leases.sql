-- DESIGN B: what only one node of a deployment does at a time (src/store/areas/leases.ts).
CREATE TABLE leases (
  name       TEXT PRIMARY KEY,
  holder     TEXT NOT NULL,
  -- Epoch ms.
  expires_at REAL NOT NULL
);
