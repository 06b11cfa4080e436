"""``python -m broker.cli ...``: the ``kafkalog`` command."""

import sys

from broker.cli.app import main

if __name__ == "__main__":
    sys.exit(main())
