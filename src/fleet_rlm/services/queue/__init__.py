"""Queue execution on Postgres (`execution = "queue"`): turns and optimization runs wait as Procrastinate jobs
for `fleet-rlm worker` processes. Only `app` and `worker` (and `schema.apply_queue_schema`) import procrastinate;
the API defers and aborts jobs with Procrastinate's own SQL functions inside its transactions (`jobs`)."""
