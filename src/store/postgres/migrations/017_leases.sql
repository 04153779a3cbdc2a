-- DESIGN B: what only one node of a deployment does at a time (src/store/areas/leases.ts).
CREATE TABLE leases (
  name       text PRIMARY KEY,
  holder     text NOT NULL,
  -- Epoch ms, by the database's clock: the nodes' clocks may disagree.
  expires_at double precision NOT NULL
);
