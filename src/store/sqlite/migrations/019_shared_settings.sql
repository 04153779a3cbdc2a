-- What every node of a deployment shares and may change while it runs (src/store/areas/shared-settings.ts).
CREATE TABLE shared_settings (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
