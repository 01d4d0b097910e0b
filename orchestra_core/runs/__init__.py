"""Running pipelines as sessions: how a run starts (new, resume, replay), what it is assembled from, and
the run itself. The public functions over this layer are in `orchestra_core.api`."""
