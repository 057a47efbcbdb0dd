"""The ``mpdp`` command line: argument types, terminal display, one module per sub-command."""
