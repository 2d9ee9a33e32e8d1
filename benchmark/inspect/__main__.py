"""``python -m benchmark.inspect`` (the same as ``python -m benchmark.preview``)."""

import sys

from benchmark.preview import main

sys.exit(main())
