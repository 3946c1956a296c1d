"""``python -m otfs.benchmark``: run the benchmark suite."""

import sys

from .suite import main

sys.exit(main())
