"""`python -m rxllm`: the `rxllm` command (`rxllm.cli`)."""

import sys

from rxllm.cli import main

sys.exit(main())
