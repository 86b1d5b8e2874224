import sys

from nadird.cli import main

sys.exit(main())
