"""``python -m otfs_workflow.benchmark``: run the benchmark suite."""

import sys

from otfs_workflow.benchmark.suite import main

sys.exit(main())
