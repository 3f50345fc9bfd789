-- The W3C traceparent of the span that published each event (at most 55
-- bytes; '' when tracing is off), so the backend that relays it continues
-- the publisher's trace. Additive: a backend of the schema before this
-- one appends rows without it.
ALTER TABLE cluster_events ADD COLUMN traceparent TEXT NOT NULL DEFAULT ''
    CHECK (length(traceparent) <= 55);
