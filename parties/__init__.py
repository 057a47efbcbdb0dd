"""The processes: party, observer, transcript store, runner, datasets and the ``mpdp`` CLI."""

__all__: list[str] = []
