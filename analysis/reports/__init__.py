"""Reports: the JSON documents mpdp writes, one round evaluated against theory, a run's report and its HTML page."""
