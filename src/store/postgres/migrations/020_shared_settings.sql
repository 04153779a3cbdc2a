-- What every node of a deployment shares and may change while it runs (src/store/areas/shared-settings.ts).
CREATE TABLE shared_settings (
  name  text PRIMARY KEY,
  value text NOT NULL
);
