"""Sub-commands of the ``mpdp`` CLI; each module exposes ``register(subparsers)``."""
