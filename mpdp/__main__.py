"""``python -m mpdp``: the same command line as the ``mpdp`` script."""

import sys

from mpdp.parties.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
