-- Named secrets (kanban.SecretInfo), encrypted at rest by package vault:
-- sealed is base64 of AES-256-GCM (version, nonce, ciphertext bound to
-- the name), key_id the id of the key that sealed it. No plaintext is
-- ever stored.
CREATE TABLE secrets (
    name       TEXT PRIMARY KEY,
    key_id     TEXT NOT NULL,
    sealed     TEXT NOT NULL,
    size       INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
