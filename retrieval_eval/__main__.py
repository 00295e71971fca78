"""``python -m retrieval_eval`` runs the command line."""

import sys

from .cli import main

sys.exit(main())
