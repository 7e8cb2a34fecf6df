import sys

from confidence.cli import main

sys.exit(main())
