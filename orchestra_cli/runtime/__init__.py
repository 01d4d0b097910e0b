"""Running a pipeline from the CLI: options, session start (new, resume, replay) and the run's assembly."""
