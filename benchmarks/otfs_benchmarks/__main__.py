"""``python -m otfs_benchmarks``: run the benchmark suite."""

import sys

from otfs_benchmarks.suite import main

sys.exit(main())
