"""``python -m benchmark.inspect``."""

import sys

from benchmark.inspect import main

sys.exit(main())
