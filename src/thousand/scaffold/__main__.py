"""`python -m thousand.scaffold B2 --slug ... --family ...`: see thousand.scaffold."""

import sys

from thousand.scaffold import main

sys.exit(main())
